"""Aggregates (stored, reloaded, joined by host name) and explain, through
the scheduler on SQLite; NUMA and PCI from a report to a placement."""

import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.cmd import spec_file
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node as cn_obj
from gantt.objects import numa as numa_obj
from gantt.objects import pci as pci_obj
from gantt.objects import request_spec
from gantt.tests import factories

# the hosts these tests expect are those Nova's spreading weighers pick
pytestmark = pytest.mark.usefixtures("nova_spreading")

AGG_SSD = "a0a0a0a0-0000-4000-8000-000000000001"
AGG_AZ = "a0a0a0a0-0000-4000-8000-000000000002"
TENANT = "a0a0a0a0-0000-4000-8000-000000000003"


def _agg(uuid, name, hosts=(), **metadata):
    return aggregate_obj.Aggregate(uuid=uuid, name=name, hosts=list(hosts),
                                   metadata=metadata)


def _hosts(selections):
    return sorted(s[0].service_host for s in selections)


def test_aggregates_are_stored_listed_and_deleted(scheduler):
    for name in ("h1", "h2", "h3", "h4"):
        assert factories.report(scheduler, name)
    scheduler.operator.set_aggregate(_agg(AGG_SSD, "ssd", ["h1"], ssd="true"))
    scheduler.operator.set_aggregate(_agg(AGG_AZ, "east", ["h2", "h3"],
                               availability_zone="east"))
    listed = scheduler.operator.get_aggregates()
    assert [(a.name, a.hosts, a.metadata) for a in listed] == [
        ("east", ["h2", "h3"], {"availability_zone": "east"}),
        ("ssd", ["h1"], {"ssd": "true"})]
    # replacing rewrites hosts and metadata whole
    scheduler.operator.set_aggregate(_agg(AGG_SSD, "ssd", ["h4"], disk="nvme"))
    [ssd] = [a for a in scheduler.operator.get_aggregates(
        ) if a.uuid == AGG_SSD]
    assert (ssd.hosts, ssd.metadata) == (["h4"], {"disk": "nvme"})
    assert scheduler.operator.delete_aggregate(AGG_SSD) is True
    assert scheduler.operator.delete_aggregate(AGG_SSD) is False
    assert [a.uuid for a in scheduler.operator.get_aggregates()] == [AGG_AZ]


@pytest.mark.parametrize("aggregate", [
    _agg(AGG_SSD, ""),
    _agg(AGG_SSD, "x" * 256),
    _agg(AGG_SSD, "ok", [""]),
    _agg(AGG_SSD, "ok", **{"k": "v" * 256}),
])
def test_bad_aggregates_are_refused(scheduler, aggregate):
    with pytest.raises(exception.InvalidRequest):
        scheduler.operator.set_aggregate(aggregate)
    assert scheduler.operator.get_aggregates() == []


def test_an_aggregate_naming_an_unknown_host_is_refused(scheduler):
    assert factories.report(scheduler, "h1")
    with pytest.raises(exception.HostNotFound) as err:
        scheduler.operator.set_aggregate(
            _agg(AGG_SSD, "ssd", ["h1", "h9", "h8"]))
    assert "h8, h9" in str(err.value)
    assert scheduler.operator.get_aggregates() == []
    scheduler.operator.set_aggregate(_agg(AGG_SSD, "ssd", ["h1"]))
    # a host it already lists is not checked again (it may have gone)
    with pytest.raises(exception.HostNotFound):
        scheduler.operator.set_aggregate(
            _agg(AGG_SSD, "renamed", ["h1", "h9"]))
    [stored] = scheduler.operator.get_aggregates()
    assert (stored.name, stored.hosts) == ("ssd", ["h1"])


def test_a_host_named_by_an_aggregate_joins_it_whenever_it_reports(scheduler):
    # reports no zone: the aggregate's
    assert factories.report(scheduler, "late")
    scheduler.operator.set_aggregate(_agg(AGG_AZ, "east", ["late"],
                               availability_zone="east"))
    assert factories.report(scheduler, "early", zone="east")
    assert factories.report(scheduler, "late")           # and reports again
    assert factories.report(scheduler, "other", zone="west")
    spec = factories.request(availability_zone="east")
    result = scheduler.operator.explain(spec)
    assert sorted(h.host for h in result.weighed) == ["early", "late"]
    assert result.summary == "2 of 3 hosts available: 1 AvailabilityZoneFilter"
    state = {s.host: s for s in scheduler.operator.get_host_states()}
    assert state["late"].aggregates == [AGG_AZ]
    # leaving the aggregate takes the host out of the zone
    scheduler.operator.set_aggregate(
        _agg(AGG_AZ, "east", [], availability_zone="east"))
    assert scheduler.operator.get_host_states(["late"])[0].aggregates == []
    result = scheduler.operator.explain(spec)
    assert [h.host for h in result.weighed] == ["early"]
    # and a zone set by aggregate metadata wins over the reported one
    scheduler.operator.set_aggregate(_agg(AGG_AZ, "east", ["other"],
                               availability_zone="east"))
    result = scheduler.operator.explain(spec)
    assert sorted(h.host for h in result.weighed) == ["early", "other"]


def test_a_restarted_worker_loads_the_aggregates(conf, sqlite_db, scheduler):
    assert factories.report(scheduler, "h1")
    assert factories.report(scheduler, "h2")
    scheduler.operator.set_aggregate(_agg(TENANT, "p1-only", ["h1"],
                               filter_tenant_id="p1"))
    conf.set_override("enabled_filters", ["AggregateMultiTenancyIsolation"],
                      "filter_scheduler")
    fresh = scheduler_mod.build(conf, sqlite_db)
    fresh.stats.load_cache()
    assert len(fresh.stats.cache.aggregates) == 1
    placed = fresh.placer.select_destinations(
        factories.request(project_id="p2"),
        factories.uuids(1),
        return_alternates=False)
    assert _hosts(placed) == ["h2"]


def test_tenant_pre_filter_limits_a_project_to_its_aggregates(conf,
                                                              scheduler):
    conf.set_override("limit_tenants_to_placement_aggregate", True,
                      "scheduler")
    for name in ("h1", "h2", "h3"):
        assert factories.report(scheduler, name)
    scheduler.operator.set_aggregate(_agg(TENANT, "p1-only", ["h1"],
                               filter_tenant_id="p1"))
    placed = scheduler.placer.select_destinations(
        factories.request(project_id="p1"), factories.uuids(1),
        return_alternates=False)
    assert _hosts(placed) == ["h1"]
    # other projects are not restricted by this pre-filter
    result = scheduler.operator.explain(factories.request(project_id="p2"))
    assert result.passed == 3
    conf.set_override("placement_aggregate_required_for_tenants", True,
                      "scheduler")
    with pytest.raises(exception.NoValidHost) as err:
        scheduler.placer.select_destinations(factories.request(project_id="p2"),
                                    factories.uuids(1))
    assert "3 no aggregate for project p2" in str(err.value)


def test_explain_names_the_removed_hosts_and_the_weights(conf, scheduler):
    assert factories.report(scheduler, "big", memory_mb=65536)
    assert factories.report(scheduler, "mid", memory_mb=32768)
    assert factories.report(scheduler, "small", memory_mb=1024)
    assert factories.report(scheduler, "off", disabled=True)
    assert factories.report(scheduler, "far", zone="az9")
    spec = factories.request(factories.flavor(memory_mb=2048))
    result = scheduler.operator.explain(spec, limit=2)
    assert (result.considered, result.passed) == (5, 3)
    assert result.summary == (
        "3 of 5 hosts available: 1 were disabled, 1 lacked MEMORY_MB")
    steps = [(s.stage, s.name, s.removed, s.hosts) for s in result.steps]
    assert steps == [("filters", "ComputeFilter", 1, ["off"]),
                     ("filters", "ResourceFilter", 1, ["small"])]
    assert [h.host for h in result.weighed] == ["big", "far"]
    best = result.weighed[0]
    assert best.weight == pytest.approx(sum(best.weights.values()))
    assert best.weights["RAMWeigher"] == pytest.approx(1.0)
    # explain claims nothing
    assert scheduler.operator.get_statistics().placements == 0
    assert all(not r.used for s in scheduler.operator.get_host_states()
               for r in s.resources)


def test_explain_counts_pre_filter_steps(scheduler):
    assert factories.report(scheduler, "ok")
    assert factories.report(scheduler, "gone",
                            traits=["COMPUTE_STATUS_DISABLED"])
    result = scheduler.operator.explain(factories.request())
    assert [(s.stage, s.name, s.hosts) for s in result.steps] == [
        ("candidates", "had trait COMPUTE_STATUS_DISABLED", ["gone"])]


def test_explain_refuses_what_select_destinations_refuses(scheduler):
    bad = factories.request(factories.flavor(
        extra_specs={"hw:numa_nodes": "3"}, vcpus=4))
    with pytest.raises(exception.InvalidRequest):
        scheduler.operator.explain(bad)


def _numa_cell(cell_id, pcpus, free_pages_2m=0):
    return numa_obj.NUMACell(
        id=cell_id, cpuset=list(range(8)),
        pcpuset=list(range(100 + 10 * cell_id, 100 + 10 * cell_id + pcpus)),
        memory_mb=16384,
        mempages=[numa_obj.NUMAPagePool(size_kb=4, total=4 * 1024 * 1024),
                  numa_obj.NUMAPagePool(size_kb=2048,
                                        total=free_pages_2m)])


def test_numa_and_pci_requests_land_where_they_fit(conf, scheduler):
    conf.set_override("alias", ['{"name": "nic", "vendor_id": "8086", '
                                '"product_id": "154d"}'], "pci")
    scheduler = scheduler_mod.build(conf, scheduler.stats.db)
    scheduler.stats.load_cache()
    assert factories.report(scheduler, "plain")
    # pinned guests ask for PCPU (as in Nova), which only it offers
    assert factories.report(scheduler, "pinned", numa_cells=[_numa_cell(0, 2),
                                           _numa_cell(1, 4)],
            extra_inventories=[cn_obj.Inventory(resource_class="PCPU",
                                                total=6)])
    assert factories.report(scheduler, "huge",
                            numa_cells=[_numa_cell(0, 0, 2048)])
    assert factories.report(scheduler, "nics", pci_pools=[
        pci_obj.PciDevicePool(vendor_id="8086", product_id="154d", count=2)])

    def place(**extra_specs):
        flavor = factories.flavor(vcpus=4, memory_mb=4096,
                                  extra_specs=extra_specs)
        return _hosts(scheduler.placer.select_destinations(
            factories.request(flavor), factories.uuids(1),
            return_alternates=False))

    assert place(**{"hw:cpu_policy": "dedicated"}) == ["pinned"]
    assert place(**{"hw:mem_page_size": "large"}) == ["huge"]
    assert place(**{"pci_passthrough:alias": "nic:2"}) == ["nics"]
    with pytest.raises(exception.NoValidHost) as err:
        place(**{"pci_passthrough:alias": "nic:3"})
    assert "4 PciPassthroughFilter" in str(err.value)
    with pytest.raises(exception.InvalidRequest):
        place(**{"pci_passthrough:alias": "gpu"})


def test_spec_files_round_trip_through_yaml(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(
        "flavor: {name: m1.large, vcpus: 4, memory_mb: 8192, root_gb: 40,\n"
        "         extra_specs: {'hw:numa_nodes': 2}}\n"
        "image: {id: img-1, properties: {hw_architecture: x86_64}}\n"
        "availability_zone: az1\n"
        "instance_group: {uuid: 0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819,\n"
        "                 policy: anti-affinity,\n"
        "                 rules: {max_server_per_host: 2}}\n"
        "scheduler_hints: {query: ['>=', '$free_ram_mb', 4096],\n"
        "                  same_host:\n"
        "                    [11111111-1111-4111-8111-111111111111]}\n")
    spec = spec_file.load(str(path))
    assert isinstance(spec.flavor, request_spec.Flavor)
    assert spec.flavor.extra_specs == {"hw:numa_nodes": "2"}
    assert spec.instance_group.rules == {"max_server_per_host": "2"}
    assert spec.scheduler_hints["query"] == ['[">=", "$free_ram_mb", 4096]']
    with pytest.raises(exception.InvalidRequest):
        spec_file.from_dict({"flavor": {"vcpus": 1, "colour": "red"}})
