"""Failure domains (RPC API 1.11) on the wire: a caller capped for older
workers never sends a group's level policies to be silently ignored."""

import pytest

from gantt import exception
from gantt import objects
from gantt import rpc
from gantt.objects import request_spec
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import versions
from gantt.tests import factories

objects.register_all()


def _group(*policies):
    return request_spec.InstanceGroup(
        uuid=factories.uuids(1)[0], policy="anti-affinity",
        level_policies=[request_spec.GroupLevelPolicy(level=level, rule=rule)
                        for level, rule in policies])


def test_a_capped_client_refuses_a_group_with_level_policies(
        fake_transport):
    client = rpc_client.SchedulerClient(fake_transport, "t",
                                        version_cap="1.10")
    spec = factories.request(instance_group=_group(("rack",
                                                    "anti-affinity")))
    with pytest.raises(exception.VersionCapped,
                       match="a server group with level policies needs "
                             "RPC API 1.11"):
        client.select_destinations(None, spec, factories.uuids(1))


def test_a_group_without_them_reaches_an_older_worker():
    spec = factories.request(instance_group=_group())
    primitive = rpc.Serializer(versions.manifest_for("1.10")
                               ).serialize_entity({}, spec)
    group = primitive["gantt_object.data"]["instance_group"]
    assert group["gantt_object.version"] == "1.0"
    assert "level_policies" not in group["gantt_object.data"]


def test_uncapped_the_level_policies_travel():
    spec = factories.request(instance_group=_group(("row", "affinity")))
    back = rpc.Serializer().deserialize_entity(
        {}, rpc.Serializer().serialize_entity({}, spec))
    [policy] = back.instance_group.level_policies
    assert (policy.level, policy.rule, policy.limit) == ("row", "affinity",
                                                        1)


def test_a_report_location_is_dropped_for_an_older_worker():
    node = factories.compute_node_obj("h1", location="rack=b07")
    primitive = rpc.Serializer(versions.manifest_for("1.10")
                               ).serialize_entity({}, node)
    assert primitive["gantt_object.version"] == "1.5"
    assert "location" not in primitive["gantt_object.data"]
