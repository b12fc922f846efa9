"""Tables of a simulation: the policies side by side, one column each.

Steady-state figures are means over the second half of the run's time
(the fleet has filled, or turned over, by then); "at end" is the last
moment.
"""

import csv

from gantt.simulate import fleet as fleet_mod
from gantt.simulate import metrics

_NAMES = {"VCPU": "VCPU", "MEMORY_MB": "RAM", "DISK_GB": "disk"}


def _pct(value):
    return "%.1f %%" % (100.0 * value)


def steady_start(result):
    return result.samples[-1].time / 2.0 if result.samples else 0.0


def summary(results):
    """Rows of the main table: what each policy placed, refused and held,
    its utilisation and stranded capacity per class."""
    rows = [("", *(r.policy for r in results))]
    rows.append(("placed", *(str(r.placed) for r in results)))
    rows.append(("refused", *(str(r.refused) for r in results)))
    rows.append(("deleted", *(str(r.deleted) for r in results)))
    rows.append(("placed before 1st refusal", *(
        "-" if r.first_refusal is None else str(r.first_refusal)
        for r in results)))
    steady = [metrics.steady(r.samples, steady_start(r)) for r in results]
    rows.append(("instances held (steady)",
                 *("%.0f" % s.alive for s in steady)))
    for i, rc in enumerate(fleet_mod.CLASSES):
        rows.append(("%s used (steady)" % _NAMES[rc],
                     *(_pct(s.utilisation[i]) for s in steady)))
    for i, rc in enumerate(fleet_mod.CLASSES):
        rows.append(("%s stranded (steady)" % _NAMES[rc],
                     *(_pct(s.stranded[i]) for s in steady)))
    rows.append(("run time", *("%.1f s (%s)" % (r.seconds, r.mode)
                               for r in results)))
    return rows


def refusals(results):
    """Rows of refusals by reason (NoValidHost's), per policy."""
    reasons = sorted({k for r in results for k in r.reasons})
    rows = [("refused because", *(r.policy for r in results))]
    rows += [(reason, *(str(r.reasons.get(reason, 0)) for r in results))
             for reason in reasons]
    return rows if reasons else []


def shape_rows(fleet):
    """``{shape name: host rows}``."""
    rows = {}
    for i, host in enumerate(fleet.hosts):
        rows.setdefault(host.shape.name, []).append(i)
    return rows


def shape_fill(fleet, results):
    """Rows of each host shape's used share per class at the end."""
    capacity = metrics.capacity_of(fleet)
    by_shape = shape_rows(fleet)
    fills = [metrics.shape_fill(r.used, capacity, by_shape) for r in results]
    rows = [("at end: shape (hosts)", *(r.policy for r in results))]
    for name, members in by_shape.items():
        rows.append(("%s (%d)" % (name, len(members)), *(
            " / ".join("%.0f" % (100 * u) for u in f[name])
            for f in fills)))
    rows.append(("", *("VCPU / RAM / disk %" for _r in results)))
    return rows


def render(rows):
    """Aligned plain text; the first row is the heading."""
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
             .rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_samples(path, results):
    """Every run's samples over time as CSV: one row per policy and
    moment, with the used and stranded share of each class."""
    names = [_NAMES[rc] for rc in fleet_mod.CLASSES]
    with open(path, "w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["policy", "time", "alive"]
                     + ["%s_used" % n for n in names]
                     + ["%s_stranded" % n for n in names])
        for result in results:
            for s in result.samples:
                out.writerow([result.policy, "%.3f" % s.time, s.alive]
                             + ["%.4f" % v for v in s.utilisation]
                             + ["%.4f" % v for v in s.stranded])
