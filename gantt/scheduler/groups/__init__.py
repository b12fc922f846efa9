"""Holistic group scheduling: decide a whole group at once.

The data flow, one module per step::

    GroupRequest (wire) -> the filters, once per member shape -> eligible
    hosts -> problem.Problem (plain arrays: free room, domains per level,
    shapes, policies, members already placed)
        -> classes: hosts folded into interchangeable classes, the member
           patterns a host of each class can take
        -> greedy: the sequential answer (one member after another)
        -> milp: the joint answer, HiGHS (highs: its one caller) started
           from the sequential answer, within a time budget
        -> solve: which answer was used and its gap
    -> GroupPlan (wire), claimed under reservation consumers

The solver modules (problem, classes, greedy, milp, highs, solve) know nothing
of the host table, the wire or the database: they take numpy arrays, so
that the benchmarks and the topology levels of failure domains feed them
alike.
"""
