"""gantt-simulate: what a fleet would hold under a packing policy.

The package follows the data flow of one simulation:

    fleet.py     (hosts: YAML shapes, or a live Gantt's host states)
    workload.py  (create/delete events: a seeded generator, or a trace)
        -> replay.py   (Gantt's real engine and claims, one per policy)
        -> metrics.py  (utilisation, stranded capacity, per-shape fill)
        -> report.py   (tables) and plots.py (matplotlib, optional)

``inputs.py`` holds what the input files share (their typed error, YAML
with line numbers). The console script is ``gantt/cmd/simulate.py``; the
benchmark ``benchmarks/packing.py`` uses the same workload, replay and
metrics for its churn table.
"""
