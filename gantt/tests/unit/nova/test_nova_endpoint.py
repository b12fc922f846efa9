"""NovaSchedulerEndpoint on an in-process scheduler (SQLite): Nova's
methods placed and claimed by Gantt's engine, refusals as Nova's."""

import json
import logging
import uuid

import oslo_messaging as messaging
import pytest

from gantt.nova import endpoint as nova_endpoint
from gantt.nova import objects as nova_objects
from gantt.tests import factories

HOSTS = ("n1", "n2", "n3")


def _endpoint(conf, scheduler):
    """Nova's endpoint on ``scheduler``, with HOSTS reported."""
    conf.set_override("default_cell_uuid", str(uuid.uuid4()), "nova")
    for name in HOSTS:
        factories.report(scheduler, name)
    scheduler.ready.set()
    return nova_endpoint.NovaSchedulerEndpoint(scheduler, conf)


@pytest.fixture
def endpoint(conf, scheduler):
    return _endpoint(conf, scheduler)


def _spec(memory_mb=512, **fields):
    return nova_objects.RequestSpec(
        flavor=nova_objects.Flavor(
            id=1, name="small", vcpus=1, memory_mb=memory_mb, root_gb=1,
            ephemeral_gb=0, swap=0, flavorid="1", extra_specs={}),
        instance_uuid=str(uuid.uuid4()), num_instances=1, **fields)


def _select(endpoint, spec, **kwargs):
    kwargs.setdefault("return_objects", True)
    kwargs.setdefault("return_alternates", True)
    return endpoint.select_destinations(
        {}, spec_obj=spec, instance_uuids=[spec.instance_uuid], **kwargs)


def _refusal(fn, *args, **kwargs):
    with pytest.raises(messaging.ExpectedException) as caught:
        fn(*args, **kwargs)
    return caught.value.exc_info[1]


def test_a_claimed_selection_and_max_attempts_minus_one_alternates(
        endpoint, scheduler):
    [selections] = _select(endpoint, _spec())

    assert len(selections) == 3
    assert all(isinstance(s, nova_objects.Selection) for s in selections)
    assert sorted(s.service_host for s in selections) == sorted(HOSTS)
    assert selections[0].availability_zone == "nova"


def test_fewer_alternates_when_max_attempts_is_lower(endpoint, conf):
    conf.set_override("max_attempts", 2, "scheduler")

    [selections] = _select(endpoint, _spec())

    assert len(selections) == 2


def test_legacy_callers_get_dicts(endpoint):
    [dest] = _select(endpoint, _spec(), return_objects=False)

    assert set(dest) == {"host", "nodename", "limits"}
    assert dest["host"] in HOSTS


def test_no_room_is_novas_no_valid_host_the_detail_logged(endpoint,
                                                         caplog):
    with caplog.at_level(logging.INFO, logger="gantt"):
        error = _refusal(_select, endpoint, _spec(memory_mb=10 ** 7))

    assert type(error).__module__ == "nova.exception"
    assert type(error).__name__ == "NoValidHost"
    # what the server's owner sees as the fault: nova-scheduler's words
    assert str(error) == ("No valid host was found. There are not enough "
                          "hosts available.")
    # which hosts failed on what: the operator's log
    assert "MEMORY_MB" in caplog.text


def test_an_evacuation_adds_the_destination_to_the_claim_held(
        endpoint, scheduler):
    """Nova evacuates off a compute that is down: the instance keeps its
    claim there and the destination is claimed in addition (Placement's
    doubled-up allocation), until the source compute frees its part."""
    spec = _spec()
    [[source, *_]] = _select(endpoint, spec)
    evacuation = _spec()
    evacuation.instance_uuid = spec.instance_uuid
    evacuation.ignore_hosts = [source.service_host]

    [[dest, *alternates]] = _select(endpoint, evacuation)

    assert dest.service_host != source.service_host
    assert source.service_host not in {a.service_host for a in alternates}
    held = scheduler.placer.lookup.allocations_of([spec.instance_uuid])
    assert set(held[spec.instance_uuid]) == {source.compute_node_uuid,
                                             dest.compute_node_uuid}
    # what Nova's conductor would claim again is the destination's part
    assert list(json.loads(dest.allocation_request)["allocations"]) == [
        dest.compute_node_uuid]
    # asked again (a lost reply), nothing grows a third time
    assert type(_refusal(_select, endpoint, evacuation)).__name__ == (
        "NoValidHost")
    held_again = scheduler.placer.lookup.allocations_of([spec.instance_uuid])
    assert held_again == held


def test_an_instance_holding_another_claim_is_refused_unmoved(
        endpoint, scheduler):
    spec = _spec()
    [[first, *_]] = _select(endpoint, spec)
    # the same instance, bigger, on hosts that include its own
    again = _spec(memory_mb=1024)
    again.instance_uuid = spec.instance_uuid

    error = _refusal(_select, endpoint, again)

    assert type(error).__name__ == "NoValidHost"
    held = scheduler.placer.lookup.allocations_of([spec.instance_uuid])
    assert held[spec.instance_uuid] == {first.compute_node_uuid: {
        "VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}


def test_a_request_gantt_cannot_read_is_no_valid_host_saying_why(endpoint):
    spec = _spec()
    spec.instance_group = nova_objects.InstanceGroup(
        uuid=str(uuid.uuid4()), policy=None, policies=[])

    error = _refusal(_select, endpoint, spec)

    assert type(error).__name__ == "NoValidHost"
    assert "has no policy" in str(error)


def test_a_legacy_dict_request_is_an_unsupported_version(endpoint):
    error = _refusal(endpoint.select_destinations, {},
                     request_spec={}, filter_properties={})

    assert isinstance(error, messaging.UnsupportedVersion)


def test_a_request_without_instance_uuids_is_an_unsupported_version(
        endpoint):
    error = _refusal(endpoint.select_destinations, {}, spec_obj=_spec())

    assert isinstance(error, messaging.UnsupportedVersion)


def test_aggregates_leave_out_hosts_gantt_does_not_know(endpoint,
                                                        scheduler):
    agg = nova_objects.Aggregate(
        id=1, uuid=str(uuid.uuid4()), name="a", hosts=["n1", "unknown"],
        metadata={"availability_zone": "az1"})

    endpoint.update_aggregates({}, nova_objects.AggregateList(
        objects=[agg]))

    [stored] = scheduler.operator.get_aggregates()
    assert (stored.uuid, stored.hosts) == (agg.uuid, ["n1"])
    [selections] = _select(endpoint, _spec(availability_zone="az1"))
    assert [s.availability_zone for s in selections] == ["az1"]

    endpoint.delete_aggregate({}, agg)

    assert scheduler.operator.get_aggregates() == []


#: Nova 34's ``[filter_scheduler] enabled_filters`` default
NOVA_34_FILTERS = ["ComputeFilter", "ComputeCapabilitiesFilter",
                   "ImagePropertiesFilter", "ServerGroupAntiAffinityFilter",
                   "ServerGroupAffinityFilter"]


def test_the_zone_restricts_without_its_filter_as_in_nova_34(
        conf, sqlite_db):
    """Nova 34's default filters leave AvailabilityZoneFilter out: its
    request filter maps the zone to the zone's aggregates on every
    request, and so does Gantt's front door for Nova."""
    from gantt import scheduler as scheduler_mod
    conf.set_override("enabled_filters", NOVA_34_FILTERS,
                      "filter_scheduler")
    conf.set_override("connection", sqlite_db.url, "database")
    scheduler = scheduler_mod.build(conf, sqlite_db)
    scheduler.stats.load_cache()
    endpoint = _endpoint(conf, scheduler)
    endpoint.update_aggregates({}, nova_objects.AggregateList(objects=[
        nova_objects.Aggregate(id=i, uuid=str(uuid.uuid4()), name=zone,
                               hosts=[host],
                               metadata={"availability_zone": zone})
        for i, (host, zone) in enumerate([("n1", "az1"), ("n2", "az2")])]))

    for zone, host in (("az1", "n1"), ("az2", "n2")):
        [selections] = _select(endpoint, _spec(availability_zone=zone))
        assert [s.service_host for s in selections] == [host]


def test_a_moving_member_may_stay_on_its_own_host(endpoint):
    """Nova's anti-affinity filter passes the host the instance being
    moved is on (a resize to the same host); another member's host it
    does not."""
    me, other = str(uuid.uuid4()), str(uuid.uuid4())
    endpoint.update_instance_info({}, "n1", nova_objects.InstanceList(
        objects=[nova_objects.Instance(uuid=me)]))

    def resize_to(host):
        spec = _spec(
            instance_group=nova_objects.InstanceGroup(
                uuid=str(uuid.uuid4()), policy="anti-affinity",
                members=[me, other], hosts=["n1", "n2"]),
            requested_destination=nova_objects.Destination(host=host))
        spec.instance_uuid = me
        return _select(endpoint, spec)

    [[selection, *_]] = resize_to("n1")
    assert selection.service_host == "n1"
    error = _refusal(resize_to, "n2")
    assert type(error).__name__ == "NoValidHost"


def test_instance_info_is_kept_per_host(endpoint):
    one, two = str(uuid.uuid4()), str(uuid.uuid4())
    instances = nova_objects.InstanceList(objects=[
        nova_objects.Instance(uuid=one), nova_objects.Instance(uuid=two)])

    endpoint.update_instance_info({}, "n1", instances)
    endpoint.delete_instance_info({}, "n1", one)

    assert endpoint.instances.by_host == {"n1": {two}}
    assert endpoint.instances.sync("n1", [one]) is True
    assert endpoint.instances.sync("n1", [one]) is False


def test_a_rebuild_checks_the_instances_host_and_claims_nothing(
        endpoint, scheduler):
    spec = _spec(scheduler_hints={"_nova_check_type": ["rebuild"]},
                 requested_destination=nova_objects.Destination(host="n2"))

    [[selection]] = _select(endpoint, spec)

    assert selection.service_host == "n2"
    assert selection.allocation_request is None
    assert scheduler.placer.lookup.allocations_of(
        [spec.instance_uuid]) == {}


def test_a_flavor_without_its_sizes_is_refused_as_unreadable(endpoint):
    spec = _spec()
    del spec.flavor.vcpus

    error = _refusal(_select, endpoint, spec)

    assert "cannot read" in str(error)


def test_a_default_cell_that_is_no_uuid_stops_the_daemon_at_start(tmp_path):
    from gantt.cmd import common
    path = tmp_path / "gantt.conf"
    path.write_text("[nova]\ndefault_cell_uuid = cell1\n")
    conf = common.parse_args(["--config-file", str(path)], log=False)

    found = common.bad_values(conf)

    assert [(bad.group, bad.option) for bad in found] == [
        ("nova", "default_cell_uuid")]
