"""Nova 34's scheduler clients, unchanged, get their answers from Gantt.

Every call here is Nova's own code (``SchedulerQueryClient``,
``SchedulerAPI``) over RabbitMQ to a real ``gantt-scheduler`` with
``[nova] enabled``; the hosts are reported through Gantt's own reporting
(agents' casts), and what Gantt claimed is read from its database.
"""

import uuid

from nova import exception as nova_exception
from nova import objects
import oslo_messaging as messaging
from oslo_serialization import jsonutils
import pytest

from gantt.tests import factories
from gantt.tests.functional import waiting
from gantt.tests.nova_e2e import nova_requests as nr
from gantt.tests.nova_e2e.conftest import CELL
from gantt.tests.nova_e2e.conftest import HOSTS

FLAVOR_USAGE = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}


def _select(gantt, spec, uuids, alternates=True, objects_=True):
    return gantt.query.select_destinations(
        nr.ctxt(), spec, uuids, return_objects=objects_,
        return_alternates=alternates)


def test_one_instance_gets_a_claimed_selection_and_alternates(gantt):
    gantt.report(*HOSTS)
    spec = nr.spec()

    [selections] = _select(gantt, spec, [spec.instance_uuid])

    # the claimed host and max_attempts - 1 = 2 alternates, all Nova's
    # Selection objects, all different hosts
    assert len(selections) == 3
    assert all(isinstance(s, objects.Selection) for s in selections)
    assert sorted(s.service_host for s in selections) == sorted(HOSTS)
    claimed = selections[0]
    assert claimed.compute_node_uuid == factories.host_uuid(
        claimed.service_host)
    assert claimed.nodename == claimed.service_host
    assert claimed.cell_uuid == CELL
    assert claimed.availability_zone == "nova"
    # what Gantt holds for the instance is exactly the allocation request
    # the Selection carries (Placement's body at 1.36)
    assert claimed.allocation_request_version == "1.36"
    body = jsonutils.loads(claimed.allocation_request)
    assert body == {
        "allocations": {claimed.compute_node_uuid: {
            "resources": FLAVOR_USAGE}},
        "mappings": {"": [claimed.compute_node_uuid]}}
    assert gantt.allocations(spec.instance_uuid) == {
        spec.instance_uuid: {claimed.compute_node_uuid: FLAVOR_USAGE}}
    # each alternate's request names its own host, claimed by nobody yet
    for alt in selections[1:]:
        assert list(jsonutils.loads(alt.allocation_request)[
            "allocations"]) == [alt.compute_node_uuid]


def test_without_alternates_only_the_claimed_host(gantt):
    gantt.report(*HOSTS)
    spec = nr.spec()

    [selections] = _select(gantt, spec, [spec.instance_uuid],
                           alternates=False)

    assert len(selections) == 1


def test_return_objects_false_answers_legacy_dicts(gantt):
    gantt.report(*HOSTS)
    spec = nr.spec()

    [dest] = _select(gantt, spec, [spec.instance_uuid], objects_=False)

    assert dest["host"] in HOSTS
    assert dest["nodename"] == dest["host"]
    assert gantt.allocations(spec.instance_uuid)


def test_multi_instance_request_claims_every_instance(gantt):
    gantt.report(*HOSTS)
    uuids = [str(uuid.uuid4()) for _ in range(3)]
    spec = nr.spec(num_instances=3, instance_uuid=uuids[0])

    lists = _select(gantt, spec, uuids)

    assert len(lists) == 3
    held = gantt.allocations(*uuids)
    for instance, selections in zip(uuids, lists, strict=True):
        assert held[instance] == {
            selections[0].compute_node_uuid: FLAVOR_USAGE}


def test_anti_affinity_group_spreads_and_refuses_beyond_its_hosts(gantt):
    gantt.report(*HOSTS[:2])
    uuids = [str(uuid.uuid4()) for _ in range(2)]
    group = nr.server_group("anti-affinity", members=uuids)
    spec = nr.spec(num_instances=2, instance_uuid=uuids[0],
                   instance_group=group)

    lists = _select(gantt, spec, uuids)

    assert {sels[0].service_host for sels in lists} == set(HOSTS[:2])
    # a third member has no host left: Nova's own NoValidHost, nothing held
    third = str(uuid.uuid4())
    group = nr.server_group("anti-affinity", members=uuids + [third])
    group.uuid = spec.instance_group.uuid
    spec = nr.spec(instance_uuid=third, instance_group=group)
    with pytest.raises(nova_exception.NoValidHost):
        _select(gantt, spec, [third])
    assert gantt.allocations(third) == {}


def test_affinity_group_lands_together(gantt):
    gantt.report(*HOSTS)
    uuids = [str(uuid.uuid4()) for _ in range(3)]
    spec = nr.spec(num_instances=3, instance_uuid=uuids[0],
                   instance_group=nr.server_group("affinity",
                                                  members=uuids))

    lists = _select(gantt, spec, uuids)

    assert len({sels[0].service_host for sels in lists}) == 1


def test_forced_host_is_used(gantt):
    gantt.report(*HOSTS)
    spec = nr.spec(force_hosts=[HOSTS[1]])

    [selections] = _select(gantt, spec, [spec.instance_uuid])

    assert selections[0].service_host == HOSTS[1]


def test_requested_destination_is_honoured(gantt):
    gantt.report(*HOSTS)
    spec = nr.spec(requested_destination=objects.Destination(
        host=HOSTS[2], node=HOSTS[2]))

    [selections] = _select(gantt, spec, [spec.instance_uuid])

    assert selections[0].service_host == HOSTS[2]
    assert len(selections) == 1    # no other host is allowed


def test_a_rebuild_checks_its_host_and_claims_nothing(gantt):
    gantt.report(*HOSTS)
    # what nova-api sends for a rebuild with a new image
    spec = nr.spec(scheduler_hints={"_nova_check_type": ["rebuild"]},
                   requested_destination=objects.Destination(
                       host=HOSTS[1], node=HOSTS[1]))

    [[selection]] = _select(gantt, spec, [spec.instance_uuid])

    assert selection.service_host == HOSTS[1]
    assert selection.allocation_request is None
    assert gantt.allocations(spec.instance_uuid) == {}


def test_too_big_a_flavor_is_novas_no_valid_host(gantt):
    gantt.report(*HOSTS, memory_mb=1024)
    spec = nr.spec(flavor=nr.flavor(memory_mb=4096))

    with pytest.raises(nova_exception.NoValidHost) as caught:
        _select(gantt, spec, [spec.instance_uuid])

    # the server's fault says what nova-scheduler's says; Gantt's log why
    assert caught.value.format_message() == (
        "No valid host was found. There are not enough hosts available.")
    assert "MEMORY_MB" in gantt.log()
    assert gantt.allocations(spec.instance_uuid) == {}


def test_aggregate_casts_set_and_remove_availability_zones(gantt):
    gantt.report(*HOSTS)
    aggregate = objects.Aggregate(
        id=1, uuid=str(uuid.uuid4()), name="az1-hosts",
        hosts=[HOSTS[0]], metadata={"availability_zone": "az1"})

    gantt.query.update_aggregates(nr.ctxt(), [aggregate])
    spec = nr.spec(availability_zone="az1")
    [selections] = _wait_for(lambda: _select(gantt, spec,
                                             [spec.instance_uuid]))

    assert selections[0].service_host == HOSTS[0]
    assert selections[0].availability_zone == "az1"

    gantt.query.delete_aggregate(nr.ctxt(), aggregate)
    with pytest.raises(nova_exception.NoValidHost):
        _wait_until_raises(
            lambda: _select_new(gantt, availability_zone="az1"),
            nova_exception.NoValidHost)


def test_instance_info_casts_are_taken(gantt):
    gantt.report(*HOSTS)
    instance = objects.Instance(uuid=str(uuid.uuid4()), host=HOSTS[0])
    ctxt = nr.ctxt()

    gantt.query.update_instance_info(ctxt, HOSTS[0], instance)
    gantt.query.update_instance_info(
        ctxt, HOSTS[0], objects.InstanceList(objects=[instance]))
    gantt.query.delete_instance_info(ctxt, HOSTS[0], instance.uuid)
    gantt.query.sync_instance_info(ctxt, HOSTS[0], [str(uuid.uuid4())])

    _wait_for(lambda: _in_log(gantt, "instance sync for host %s did not "
                                     "match" % HOSTS[0]))


def test_another_major_version_is_unsupported(gantt):
    client = gantt.rpcapi.client.prepare(version="5.0")

    with pytest.raises(messaging.RemoteError) as caught:
        client.call(nr.ctxt(), "select_destinations", spec_obj=None,
                    instance_uuids=[])

    assert caught.value.exc_type == "UnsupportedVersion"


def test_an_unknown_method_is_no_such_method(gantt):
    client = gantt.rpcapi.client.prepare(version="4.5")

    with pytest.raises(messaging.RemoteError) as caught:
        client.call(nr.ctxt(), "run_instance")

    assert caught.value.exc_type == "NoSuchMethod"


def test_a_malformed_object_is_refused_and_changes_nothing(gantt):
    gantt.report(*HOSTS)
    spec = nr.spec()
    primitive = spec.obj_to_primitive()
    primitive["nova_object.data"]["num_instances"] = "many"
    client = gantt.rpcapi.client.prepare(version="4.5")

    with pytest.raises(messaging.RemoteError) as caught:
        # raw: Nova's serializer passes a primitive through as it is
        client.call(nr.ctxt(), "select_destinations", spec_obj=primitive,
                    instance_uuids=[spec.instance_uuid],
                    return_objects=True, return_alternates=True)

    assert caught.value.exc_type == "InvalidRequest"
    assert "num_instances" in caught.value.value
    assert gantt.allocations(spec.instance_uuid) == {}


def _select_new(gantt, **fields):
    spec = nr.spec(**fields)
    return _select(gantt, spec, [spec.instance_uuid])


def _in_log(gantt, text):
    if text not in gantt.log():
        raise AssertionError("%r not in the daemon's log" % text)
    return True


def _wait_for(fn):
    """``fn()``'s result once it stops raising (a cast takes effect a
    moment after it is sent)."""
    return waiting.until("%s to succeed" % fn.__name__, lambda: (fn(),),
                         ignoring=(Exception,), interval=0.2)[0]


def _wait_until_raises(fn, error):
    """Call ``fn()`` until it raises ``error``, then raise that."""
    def raised():
        try:
            fn()
        except error as exc:
            return (exc,)
        return None
    raise waiting.until("%s to raise %s" % (fn.__name__, error.__name__),
                        raised, ignoring=(Exception,), interval=0.2)[0]
