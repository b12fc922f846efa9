"""Forbidden traits and aggregates on hosts that are one provider.

No solver looks at such a host: the candidates step alone must drop it,
for select_destinations and for get_allocation_candidates alike.
"""

import uuid

import pytest

from gantt import exception
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import request_spec
from gantt.tests import factories

GOLD = "a0a0a0a0-0000-4000-8000-0000000000a1"
SSD = "STORAGE_DISK_SSD"


def _fleet(scheduler):
    """``ssd`` has the trait SSD, ``gold`` is in the aggregate GOLD,
    ``plain`` has neither."""
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "ssd", traits=[SSD], vcpus=64))
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "gold", aggregates=[GOLD], vcpus=32))
    scheduler.stats.update_resource_stats(factories.compute_node_obj("plain"))


def _hosts(scheduler, spec):
    found = scheduler.placer.get_allocation_candidates(spec)
    table = scheduler.stats.cache.table
    names = {table.hosts[table.row_by_uuid[c.root_provider_uuid]]
             for c in found}
    [sels] = scheduler.placer.select_destinations(spec, [str(uuid.uuid4())])
    assert sels[0].service_host in names
    return names


def _spec(extra_specs=None, **group):
    groups = [request_spec.RequestGroup(**group)] if group else []
    return factories.request(
        factories.flavor(vcpus=1, memory_mb=512, root_gb=1,
                         extra_specs=extra_specs or {}),
        request_groups=groups)


@pytest.mark.parametrize("spec, expected", [
    (lambda: _spec(), {"ssd", "gold", "plain"}),
    (lambda: _spec({"trait:%s" % SSD: "forbidden"}), {"gold", "plain"}),
    (lambda: _spec(forbidden_traits=[SSD]), {"gold", "plain"}),
    (lambda: _spec(forbidden_aggregates=[GOLD]), {"ssd", "plain"}),
    (lambda: _spec(forbidden_traits=[SSD], forbidden_aggregates=[GOLD]),
     {"plain"}),
])
def test_forbidden_traits_and_aggregates_drop_flat_hosts(scheduler, spec,
                                                         expected):
    _fleet(scheduler)
    assert _hosts(scheduler, spec()) == expected


def test_root_forbidden_drops_flat_hosts(scheduler):
    _fleet(scheduler)
    spec = _spec()
    spec.root_forbidden = [SSD]
    assert _hosts(scheduler, spec) == {"gold", "plain"}


def test_forbidden_aggregates_listed_by_the_operator(scheduler):
    # membership from the aggregate's host list, not the agent's report
    _fleet(scheduler)
    scheduler.operator.set_aggregate(aggregate_obj.Aggregate(
        uuid=GOLD.replace("a1", "a2"), name="listed", hosts=["plain"],
        metadata={}))
    assert _hosts(scheduler, _spec(
        forbidden_aggregates=[GOLD.replace("a1", "a2")])) == {"ssd", "gold"}


def test_nothing_left_says_which_rule_removed_the_hosts(scheduler):
    scheduler.stats.update_resource_stats(factories.compute_node_obj(
        "ssd", traits=[SSD]))
    with pytest.raises(exception.NoValidHost,
                       match="1 had forbidden trait %s" % SSD):
        scheduler.placer.select_destinations(_spec(forbidden_traits=[SSD]),
                                    [str(uuid.uuid4())])
    with pytest.raises(exception.InvalidRequest):
        scheduler.placer.select_destinations(
            _spec(forbidden_traits=[SSD], required_traits=[SSD]),
            [str(uuid.uuid4())])
