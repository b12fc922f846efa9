"""One call's scheduling cycle: its decisions and its per-call state.

A ``select_destinations`` or ``move_claim`` call reads one
:class:`~gantt.scheduler.state.host_view.HostView` and decides each of its
instances in turn. What it learns on the way (hosts whose claim failed,
trees with no fitting layout, the room its instances held before a retried
call) lives in a :class:`CycleState`, not in locals spread over the
placer. A decision enters the view, the request's ledger and the server
group through :meth:`CycleState.place` and leaves them through
:meth:`CycleState.unplace`: one path each way.

This module reads the view and writes only this call's scratch; the
database and the cache are the placer's and the claim service's.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Decision:
    """Where one instance goes, and what it takes there."""

    consumer_uuid: str
    row: int                  # its host's row in the cycle's view
    weight: float
    weighing: object          # the Weighing it was picked from (alternates)
    allocations: dict         # {provider uuid: {class: amount}}


@dataclasses.dataclass
class CycleState:
    """One call's request, window and scratch.

    :attr candidates: stage 1's outcome, computed once per call by the
        pipeline (None until then)
    :attr failed: rows whose claim failed for the instance being decided
    :attr unfit: tree rows with no fitting layout for it
    :attr excluding: whether any row is failed or unfit (most passes
        exclude none, and then skip the masks)
    :attr held: ``{consumer: [(row, resources)]}``: room the instances of
        a retried call hold already, counted as free in the view
    :attr owner: who claims (project, user, server-group rule); the
        placer's, opaque here
    """

    request: object           # ResourceRequest
    view: object              # HostView
    owner: object = None
    candidates: object = None
    held: dict = dataclasses.field(default_factory=dict)
    failed: np.ndarray = None
    unfit: np.ndarray = None
    excluding: bool = False

    def __post_init__(self):
        self.next_instance()
        if getattr(self.request, "instance_group", None) is not None:
            self.request.instance_group.places = self.view

    def next_instance(self):
        """Forget the rows excluded for the previous instance: a failed
        host was re-read from the database, and may fit the next one."""
        self.failed = np.zeros(self.view.n, dtype=bool)
        self.unfit = np.zeros(self.view.n, dtype=bool)
        self.excluding = False

    def exclude_failed(self, row):
        """The claim on ``row`` failed: not for this instance again."""
        self.failed[row] = True
        self.excluding = True

    def exclude_unfit(self, row):
        """``row``'s tree has no layout for this request's shape."""
        self.unfit[row] = True
        self.excluding = True

    def afresh(self):
        """This cycle with nothing excluded (to weigh alternates)."""
        return dataclasses.replace(self)

    def count_out_held(self, allocations):
        """Give this call the room its instances hold already.

        A retried call claims again for the same instances, and the claim
        replaces the old allocation: the filters must see that room as
        free, and a server group must not count an instance against
        itself.

        :param allocations: ``{consumer: {provider: {class: amount}}}``
            as the database holds them
        """
        view, group = self.view, self.request.instance_group
        for consumer, providers in allocations.items():
            self.held[consumer] = []
            for provider, resources in providers.items():
                row = view.row_of(provider)
                if row is None:
                    continue
                self.held[consumer].append((row, resources))
                view.consume(row, {rc: -amount
                                   for rc, amount in resources.items()})
                if group is not None:
                    group.remove_member(view.hosts[row])

    def count_out_member(self, providers):
        """A first move: the source stays counted as usage (a resize on
        the same host needs room for both), but the instance does not
        count against its own host in its server group, as Nova's
        anti-affinity filter passes the host the instance is on.

        :param providers: the moving instance's ``{provider: amounts}``
        """
        group, view = self.request.instance_group, self.view
        if group is None:
            return
        rows = {view.row_of(p) for p in providers}
        for host in {view.hosts[row] for row in rows if row is not None}:
            group.remove_member(host)

    def place(self, decision, generations=None):
        """Count ``decision`` in this call: the view (when claimed, see
        :meth:`HostView.note_claim`), the NUMA cells, pinned CPUs, pages
        and PCI devices it takes, and the server group's members.

        :param generations: ``{provider: generation}`` the claim committed;
            None for a decision whose room the caller counted itself
        """
        request, view = self.request, self.view
        if generations is not None:
            view.note_claim(decision.row, request.resources, generations,
                            self.held.get(decision.consumer_uuid, ()))
        request.record_placement(view, decision.row)
        if request.instance_group is not None:
            request.instance_group.add_member(view.hosts[decision.row])

    def unplace(self, decisions):
        """Undo :meth:`place` for decisions that were not claimed (the
        batch lost its race; they will be decided again)."""
        group = self.request.instance_group
        if group is not None:
            group.remove_members(self.view.hosts[d.row] for d in decisions)
        self.request.forget_placements()
