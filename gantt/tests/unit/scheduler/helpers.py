"""Small builders shared by the scheduler unit tests (not a test module)."""

import numpy as np

from gantt.objects import provider as provider_obj
from gantt.scheduler.pipeline import translate
from gantt.scheduler.state import aggregates as aggregate_set
from gantt.scheduler.state import cache as cache_mod
from gantt.scheduler.state import host_view
from gantt.scheduler.state import provider_tree
from gantt.scheduler.state import update as update_mod
from gantt.tests import factories

#: the injected clock of every cache built here
NOW = 1_000_000.0
SERVICE_DOWN_TIME = 60


class FakeLookup:
    """Test double for claims.DatabaseLookup: answers from two dicts.

    :param group_hosts: ``{group uuid: {host: members there}}``
    :param consumer_hosts: ``{instance uuid: host}``
    """

    def __init__(self, group_hosts=None, consumer_hosts=None):
        self._group_hosts = group_hosts or {}
        self._consumer_hosts = consumer_hosts or {}

    def group_hosts(self, group_uuid):
        return dict(self._group_hosts.get(group_uuid, {}))

    def consumer_hosts(self, uuids):
        return {self._consumer_hosts[u] for u in uuids
                if u in self._consumer_hosts}


def host_report(node, received_at=NOW):
    """The cache's HostUpdate of ``node`` (a ComputeNode), received at
    ``received_at`` on the injected clock."""
    return update_mod.HostUpdate.from_compute_node(node,
                                                   received_at=received_at)


def standalone(report):
    """The cache's provider of a ProviderReport (its own root)."""
    rp = report.provider
    return provider_tree.Provider(
        uuid=rp.uuid, name=rp.name, parent_uuid=None, root_uuid=rp.uuid,
        inventories={i.resource_class: update_mod.Inventory(
            i.total, i.reserved, i.min_unit, i.max_unit, i.step_size,
            i.allocation_ratio) for i in rp.inventories},
        traits=frozenset(rp.traits), aggregates=frozenset(rp.aggregates))


def view_of(cache, service_down_time=SERVICE_DOWN_TIME):
    """A HostView over ``cache``'s table, taken at ``NOW``."""
    return host_view.HostView(cache.table, NOW, service_down_time)


def make_cache(*nodes, ages=None, usages=None, aggregates=()):
    """A HostStateCache holding ``nodes`` (ComputeNode objects, or
    ProviderReports of standalone providers: agents, container hosts).

    :param ages: ``{host name: seconds since its last report}``
    :param usages: ``{host name: {class: used}}``
    :param aggregates: Aggregate objects, applied after the reports
    """
    ages = ages or {}
    usages = usages or {}
    cache = cache_mod.HostStateCache(clock=lambda: NOW)
    for node in nodes:
        if isinstance(node, provider_obj.ProviderReport):
            name, uuid = node.provider.name, node.provider.uuid
            cache.apply_provider(standalone(node), node.report_sequence,
                                 details=update_mod.Standalone.from_report(
                                     node),
                                 received_at=NOW - ages.get(name, 0))
        else:
            name, uuid = node.host, node.uuid
            cache.apply_report(host_report(
                node, received_at=NOW - ages.get(name, 0)))
        if name in usages:
            cache.apply_usage(uuid, 1, usages[name])
    if aggregates:
        cache.apply_aggregates(aggregate_set.AggregateSet(aggregates))
    return cache


def make_view(*nodes, ages=None, usages=None, aggregates=()):
    """A HostView over ``nodes``, in that row order (see make_cache)."""
    return view_of(make_cache(*nodes, ages=ages, usages=usages,
                              aggregates=aggregates))


def node(name="host1", **kwargs):
    return factories.compute_node_obj(name, **kwargs)


def make_request(flavor=None, *, lookup=None, instance_uuids=None,
                 **spec_fields):
    """A validated ResourceRequest, as from_spec builds it."""
    spec = factories.request(flavor, **spec_fields)
    return translate.from_spec(spec, instance_uuids or factories.uuids(1),
                                 lookup or FakeLookup())


def both_paths(flt, view, request):
    """``(passes_columns result as a list, host_passes per row)``.

    The column result must be one boolean per row: the runner ANDs it
    into the candidate mask.
    """
    columns = flt.passes_columns(view, request)
    assert columns is None or (columns.dtype == bool
                               and columns.shape == (view.n,)), columns
    per_host = [bool(flt.host_passes(view.record(row), request))
                for row in range(view.n)]
    return (None if columns is None else [bool(v) for v in columns],
            per_host)


def assert_both_paths(flt, view, request, expected):
    """Both the column and the per-host path give ``expected`` (a list of
    booleans, one per row)."""
    columns, per_host = both_paths(flt, view, request)
    assert columns == expected, "passes_columns"
    assert per_host == expected, "host_passes"



def raw(weigher, view, request):
    """A weigher's raw values on both paths, which must agree."""
    rows = np.arange(view.n)
    columns = weigher.weigh_columns(view, request, rows)
    per_host = [weigher.weigh_host(view.record(r), request) for r in rows]
    assert np.allclose(columns, per_host)
    return [float(v) for v in per_host]
