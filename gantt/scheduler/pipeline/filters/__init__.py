"""Filters: each removes hosts that cannot take the request, and says why.

A filter is a small class registered under the ``gantt.scheduler.filters``
entry-point group. It implements ``host_passes`` (one host at a time) and,
when the rule can be written on whole columns, ``passes_columns`` too; the
runner prefers the column path. Both paths must agree (a property test
checks every built-in filter).
"""

import dataclasses
import typing

import numpy as np

#: ``provider_kinds`` of the plugins that read what only Nova's compute
#: hosts report (NUMA cells, PCI pools, hypervisor capabilities, images)
COMPUTE = frozenset({"compute"})


class BaseFilter:
    """The filter contract.

    :attr name: the entry-point name operators list in ``enabled_filters``;
        NoValidHost summaries say "<count> <name>" for the hosts it removed
    :attr always_run: still applies to forced hosts (resource fit does)
    :attr provider_kinds: the kinds of provider the rule applies to (a
        frozenset, e.g. :data:`COMPUTE`); None: every kind. A profile
        that considers a kind its filter does not apply to is refused at
        start-up (``gantt.scheduler.pipeline.profiles``).
    """

    name = None
    always_run = False
    provider_kinds = None

    def __init__(self, conf):
        self.conf = conf

    def host_passes(self, host, request):
        """Whether one host (a HostRecord) can take one instance."""
        raise NotImplementedError(self.__class__.__name__)

    def passes_columns(self, view, request):
        """A boolean array over all rows of ``view``, or None.

        Return None when the rule cannot be vectorised; the runner then calls
        ``host_passes`` for every remaining row.
        """
        return None

    def explain(self, view, request, removed):
        """Optionally split the removed rows by cause: ``{reason: count}``.

        :param removed: boolean array of the rows this filter removed
        """
        return None

    def applies(self, request):
        """False when the request gives this filter nothing to check."""
        return True


class Removal(typing.NamedTuple):
    """How many hosts one filter (or one cause) removed."""

    label: str
    count: int


class Step(typing.NamedTuple):
    """One recorded step (explain): its removals and the rows it removed."""

    name: str
    removals: list            # of Removal
    rows: np.ndarray          # boolean over the view's rows


@dataclasses.dataclass
class FilterOutcome:
    """Which rows passed, and how many each filter (or cause) removed."""

    mask: np.ndarray
    considered: int
    # Removal per filter (or cause), in the order the filters ran
    removed: list = dataclasses.field(default_factory=list)
    # when recording (explain): a Step per filter that removed hosts
    steps: list = dataclasses.field(default_factory=list)

    def summary(self):
        """"0 of 500 hosts available: 320 lacked MEMORY_MB, 180 …"."""
        parts = ["%d %s" % (r.count, r.label) for r in self.removed
                 if r.count]
        head = "%d of %d hosts available" % (int(self.mask.sum()),
                                             self.considered)
        return head + (": " + ", ".join(parts) if parts else "")


class FilterRunner:
    """Applies the enabled filters in order and keeps the tally.

    :param vectorised: use ``passes_columns`` where a filter has it (the
        default); False runs ``host_passes`` host by host for every filter
        (the benchmark's and the property test's reference path)
    """

    def __init__(self, filters, vectorised=True):
        self.filters = list(filters)
        self.vectorised = vectorised

    def run(self, view, request, mask, skip_filters=False, record=False):
        """Narrow ``mask`` (candidates) through every filter.

        :param skip_filters: forced hosts bypass filters, as in Nova; only
            those marked ``always_run`` (resource fit) still apply
        :param record: keep each filter's removed rows in ``steps``
        """
        view.new_pass()
        outcome = FilterOutcome(mask=mask.copy(), considered=view.n)
        records = {}        # per-host plugins share each row's HostRecord
        left = int(np.count_nonzero(outcome.mask))
        for flt in self.filters:
            if not left:
                break
            if skip_filters and not getattr(flt, "always_run", False):
                continue
            if not flt.applies(request):
                continue
            before = outcome.mask
            after = before & self._passes(flt, view, request, before,
                                          self.vectorised, records)
            outcome.mask = after
            # what it removed is counted; its rows are found only if any
            count = left - int(np.count_nonzero(after))
            left -= count
            if not count:
                continue
            removed = before & ~after
            detail = flt.explain(view, request, removed)
            if detail:
                labels = sorted((Removal(label, n)
                                 for label, n in detail.items() if n),
                                key=lambda r: -r.count)
            else:
                labels = [Removal(flt.name, count)]
            outcome.removed.extend(labels)
            if record:
                outcome.steps.append(Step(flt.name, labels, removed))
        return outcome

    @staticmethod
    def _passes(flt, view, request, mask, vectorised=True, records=None):
        result = flt.passes_columns(view, request) if vectorised else None
        if result is not None:
            return result
        records = {} if records is None else records
        out = np.zeros(view.n, dtype=bool)
        for row in np.flatnonzero(mask):
            record = records.get(row)
            if record is None:
                record = records[row] = view.record(row)
            out[row] = flt.host_passes(record, request)
        return out
