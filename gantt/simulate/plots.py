"""Plots of a simulation (matplotlib, the ``[simulate]`` extra).

One figure, the policies as lines of one colour each: each class's used
share of the fleet over time (top row), the share stranded on hosts full
in another class (middle row), and each host shape's fill per class at the
end (bottom). The file's extension picks the format (``.png``, ``.svg``).
"""

import io

import numpy as np

from gantt.simulate import fleet as fleet_mod
from gantt.simulate import metrics
from gantt.simulate import report

_TITLES = {"VCPU": "VCPU", "MEMORY_MB": "RAM", "DISK_GB": "local disk"}


FORMATS = (".png", ".svg")


class PlotsUnavailable(RuntimeError):
    """matplotlib is not installed, or the file's format is not one it
    draws here."""


def check(path):
    """Fail now, before a long run, if ``path`` cannot be drawn.

    :raises: PlotsUnavailable
    """
    if not str(path).lower().endswith(FORMATS):
        raise PlotsUnavailable("%s: a plot is a %s file" % (
            path, " or ".join(FORMATS)))
    _pyplot()


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotsUnavailable(
            "plots need matplotlib: pip install 'gantt[simulate]'") from None
    matplotlib.use("Agg")
    from matplotlib import pyplot
    return pyplot


def draw(path, fleet, results, title=""):
    """Write the figure of ``results`` (on ``fleet``) to ``path``.

    :raises: PlotsUnavailable
    """
    pyplot = _pyplot()
    fig = pyplot.figure(figsize=(11, 7.5), dpi=72, layout="constrained")
    grid = fig.add_gridspec(3, len(fleet_mod.CLASSES))
    for col, rc in enumerate(fleet_mod.CLASSES):
        used = fig.add_subplot(grid[0, col])
        lost = fig.add_subplot(grid[1, col], sharex=used)
        for result in results:
            times = [s.time for s in result.samples]
            used.plot(times, [100 * s.utilisation[col]
                              for s in result.samples], label=result.policy)
            lost.plot(times, [100 * s.stranded[col]
                              for s in result.samples])
        used.set_title("%s used, %% of capacity" % _TITLES[rc])
        lost.set_title("%s stranded, %% of capacity" % _TITLES[rc])
        lost.set_xlabel("time (mean arrival gaps)")
        for ax in (used, lost):
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
    fig.axes[0].legend(fontsize="small")
    _shape_bars(fig.add_subplot(grid[2, :]), fleet, results)
    if title:
        fig.suptitle(title)
    _save(fig, path)
    pyplot.close(fig)


def _save(fig, path):
    """SVG as drawn; PNG with a palette of 128 colours (a quarter of the
    bytes, for lines and bars that look the same)."""
    if not str(path).lower().endswith(".png"):
        fig.savefig(path)
        return
    from PIL import Image  # matplotlib's own dependency
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    buffer.seek(0)
    with Image.open(buffer) as image:
        image.convert("RGB").quantize(colors=128).save(path, optimize=True)


def _shape_bars(ax, fleet, results):
    capacity = metrics.capacity_of(fleet)
    by_shape = report.shape_rows(fleet)
    labels = ["%s %s" % (name, _TITLES[rc].split()[-1])
              for name in by_shape for rc in fleet_mod.CLASSES]
    x = np.arange(len(labels))
    width = 0.8 / max(len(results), 1)
    for i, result in enumerate(results):
        fill = metrics.shape_fill(result.used, capacity, by_shape)
        values = [100 * u for name in by_shape for u in fill[name]]
        ax.bar(x + i * width - 0.4 + width / 2, values, width,
               label=result.policy)
    ax.set_xticks(x, labels, fontsize="small", rotation=20)
    ax.set_ylabel("% used at end")
    ax.set_title("fill per host shape and class, at the end")
    ax.grid(axis="y", alpha=0.3)
