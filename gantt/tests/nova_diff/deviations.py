"""The known differences between Gantt and Nova: THE list.

Every difference the differential test finds is a bug to fix or an entry
here (doc/source/admin/nova-diff.rst has them as tables, with reasons).
Each entry says which filter, weigher or check it covers, when (a
predicate on the world, the request and the host of the difference), its
status, and an example case that shows it; ``test_deviation_example`` and
``test_no_stale_deviation`` fail once an entry covers nothing, so that
an entry goes as soon as a fix makes both sides agree.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Deviation:
    """A known difference: what it is, why, and when it applies."""

    kind: str
    name: str
    reason: str
    #: "parity" (being fixed on that branch: remove the entry after the
    #: merge), "reported" (a Gantt bug this test found, not fixed yet) or
    #: "permanent" (by design); all in doc/source/admin/nova-diff.rst
    status: str
    #: a case that shows it: (world seed, request index)
    example: tuple = None
    #: (world, request, host of the difference or None) -> bool; None:
    #: always
    applies: object = None

    def covers(self, world, req, diff):
        return (diff.kind == self.kind and diff.name == self.name
                and (self.applies is None
                     or self.applies(world, req, diff.host)))


def _names_host_state_attribute(world, req, host):
    return any(key in HOST_STATE_ONLY for key in req.extra_specs)


def _undefined_zone(world, req, host):
    return req.availability_zone not in {
        a.metadata.get("availability_zone") for a in world.aggregates}


def _all_in(world, req, host):
    return any(str(value).startswith("<all-in>")
               for value in req.extra_specs.values())


def _page_size_any_or_large(world, req, host):
    return req.extra_specs.get("hw:mem_page_size") in ("any", "large")


#: ``capabilities:`` keys only a Nova HostState attribute answers
HOST_STATE_ONLY = ("capabilities:free_ram_mb",)

#: THE list of known differences (see doc/source/admin/nova-diff.rst)
DEVIATIONS = (
    # specific ones first: the first entry that covers a difference
    # takes it
    Deviation("filter", "ComputeCapabilitiesFilter",
              "capabilities:<HostState attribute> (free_ram_mb...): Gantt "
              "has no HostState, only what the agent reports",
              "permanent",
              example=(4, 0), applies=_names_host_state_attribute),
    Deviation("filter", "ComputeCapabilitiesFilter",
              "<all-in> matches whole words or list items; Nova tests "
              "substrings of the value's text (<all-in> avx matches a "
              "host with only avx2)", "permanent",
              example=(1006, 3), applies=_all_in),
    Deviation("filter", "AvailabilityZoneFilter",
              "Nova 34 restricts a zone only when an aggregate defines "
              "it: its default zone then matches every host, Gantt only "
              "the hosts outside zone aggregates (what an operator means, "
              "and Nova's AvailabilityZoneFilter before its removal)",
              "permanent",
              example=(2, 0), applies=_undefined_zone),
    Deviation("filter", "NUMATopologyFilter",
              "hw:mem_page_size=any or large (Nova bug): a host cell tried "
              "first (Nova orders cells by free resources) fixes the page "
              "size it chose there for the guest cell, and the other host "
              "cells are then asked for that size only; Nova rejects hosts "
              "whose other cell fits with another pool, Gantt takes them",
              "permanent", example=(228, 1),
              applies=_page_size_any_or_large),
)
