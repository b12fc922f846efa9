"""Weighers: rank the hosts that passed the filters.

A weigher returns one raw value per candidate. The runner normalises each
weigher's values to [0, 1] over the candidates (so that weighers with
different units can be summed), multiplies them by the weigher's
multiplier, and adds them up: the highest total wins.

* ``base.py``: the contract a weigher plugin implements
  (:class:`BaseWeigher`, :data:`ALL`, :func:`select`, :func:`size`);
* ``runner.py``: :class:`WeigherRunner`, which runs them, and what it
  returns (:class:`Weighing`, :class:`Parts`);
* ``normalize.py``: the normalisation math, and what the runner keeps of
  shared columns between requests;
* the other modules: the weighers themselves, loaded by name from the
  ``gantt.scheduler.weighers`` entry points.

The names above are re-exported here: plugins write
``from gantt.scheduler.pipeline import weighers`` and subclass
``weighers.BaseWeigher``.
"""

from gantt.scheduler.pipeline.weighers.base import ALL
from gantt.scheduler.pipeline.weighers.base import BaseWeigher
from gantt.scheduler.pipeline.weighers.base import select
from gantt.scheduler.pipeline.weighers.base import size
from gantt.scheduler.pipeline.weighers.runner import Parts
from gantt.scheduler.pipeline.weighers.runner import WeigherRunner
from gantt.scheduler.pipeline.weighers.runner import Weighing

__all__ = ["ALL", "BaseWeigher", "Parts", "WeigherRunner", "Weighing",
           "select", "size"]
