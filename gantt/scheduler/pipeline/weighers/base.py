"""The weigher contract: what a weigher plugin implements.

A weigher returns one raw value per candidate, host by host
(:meth:`BaseWeigher.weigh_host`) or for many rows at once
(:meth:`BaseWeigher.weigh_columns`); the runner (``runner.py``) normalises
and sums them. As in Nova, the multiplier of a host is overridden by the
metadata key named like the option on the aggregates the host is in, the
smallest value winning (``nova.scheduler.utils.get_weight_multiplier``).
"""

import functools

from gantt.scheduler.state import aggregates

#: ``rows`` meaning "every row of the view" (the dense path)
ALL = slice(None)


def select(column, rows):
    """``column[rows]``; the column itself for :data:`ALL`, so that a
    shared read-only column keeps its identity (see
    ``normalize.ColumnFacts``)."""
    return column if rows is ALL else column[rows]


def size(view, rows):
    """How many values ``weigh_columns(view, request, rows)`` returns."""
    return view.n if isinstance(rows, slice) else len(rows)


class BaseWeigher:
    """The weigher contract.

    :attr name: entry-point name listed in ``enabled_weighers``
    :attr multiplier_option: the option holding the multiplier (in
        ``multiplier_group``, ``[filter_scheduler]`` by default); it is also
        the aggregate metadata key that overrides it per host
    :attr minval, maxval: bounds of the raw values (None: observed)
    :attr provider_kinds: the kinds of provider it weighs (a frozenset,
        e.g. ``filters.COMPUTE``); None: every kind (see the filters')
    """

    name = None
    provider_kinds = None
    multiplier_option = None
    multiplier_group = "filter_scheduler"
    #: the aggregate metadata key; None: the option's name
    multiplier_key = None
    minval = None
    maxval = None

    def __init__(self, conf):
        self.conf = conf

    # -- multiplier -------------------------------------------------------

    def config_multiplier(self):
        return getattr(self.options(self.multiplier_group),
                       self.multiplier_option)

    def options(self, group):
        """The option group ``group`` of ``conf``, looked up once (it
        reads each value live, overrides and reloads included; looking it
        up again for every request cost as much as the read)."""
        found = self._groups.get(group)
        if found is None:
            found = self._groups[group] = self.conf[group]
        return found

    @functools.cached_property
    def _groups(self):
        return {}

    @property
    def _key(self):
        return self.multiplier_key or self.multiplier_option

    def multiplier(self, view, rows):
        """The multiplier for ``rows`` (a float, or an array per row)."""
        default = self.config_multiplier()
        if not view.aggregates.with_key(self._key):
            return default
        return select(aggregates.min_number_rows(view, self._key, default),
                      rows)

    def host_multiplier(self, host):
        """The multiplier of one host (a HostRecord)."""
        return aggregates.min_number(aggregates.values(host, self._key),
                                     self.config_multiplier())

    # -- raw values -------------------------------------------------------

    def weigh_host(self, host, request):
        """The raw value for one host (a HostRecord)."""
        raise NotImplementedError(self.__class__.__name__)

    def weigh_columns(self, view, request, rows):
        """Raw values for ``rows`` (an index array), or None for per-host."""
        return None

    def constant(self, view, request):
        """True when every host would get the same raw value (nothing in
        the request or the fleet for this weigher to tell hosts apart): the
        vectorised runner then skips it, as its normalised values are all
        zero anyway."""
        return False
