"""RequestSpec 1.2 (RPC API 1.10) on the wire: what a caller capped for
older workers sends, and what it refuses to send."""

import pytest

from gantt import exception
from gantt import objects
from gantt import rpc
from gantt.objects import explain as explain_obj
from gantt.objects import group as group_obj
from gantt.objects import request_spec
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import versions
from gantt.tests import factories

objects.register_all()

OLD = versions.manifest_for("1.8")


def _sent(spec, manifest=None):
    return rpc.Serializer(manifest).serialize_entity({}, spec)


def test_uncapped_a_request_carries_its_profile_packing_and_capabilities():
    spec = factories.request(profile="volume", packing="stack",
                             capabilities={"thin": "<is> True"})
    primitive = _sent(spec)
    assert primitive["gantt_object.version"] == "1.3"
    back = rpc.Serializer().deserialize_entity({}, primitive)
    assert (back.profile, back.packing, back.capabilities) == (
        "volume", "stack", {"thin": "<is> True"})


def test_a_nova_shaped_request_reaches_an_older_worker_unchanged():
    spec = factories.request()
    primitive = _sent(spec, OLD)
    assert primitive["gantt_object.version"] == "1.1"
    data = primitive["gantt_object.data"]
    assert not {"profile", "packing", "capabilities"} & set(data)
    back = rpc.Serializer().deserialize_entity({}, primitive)
    assert back.flavor.name == spec.flavor.name


def test_naming_the_default_profile_is_no_news_to_an_older_worker():
    primitive = _sent(factories.request(profile="default"), OLD)
    assert primitive["gantt_object.version"] == "1.1"
    assert "profile" not in primitive["gantt_object.data"]


@pytest.mark.parametrize("fields, asks", [
    ({"profile": "volume"}, "a request naming scheduling profile volume"),
    ({"packing": "stack"}, "a request naming packing policy stack"),
    ({"capabilities": {"thin": "<is> True"}},
     "a request with capabilities thin"),
    ({"flavor": None}, "a request without a flavor"),
])
def test_what_an_older_worker_would_place_wrongly_is_not_sent(fields, asks):
    spec = request_spec.RequestSpec(**{"flavor": factories.flavor(),
                                       **fields})
    with pytest.raises(exception.VersionCapped) as raised:
        _sent(spec, OLD)
    assert str(raised.value).startswith(asks + " needs RPC API 1.10")


def test_a_capped_client_refuses_a_profile_before_sending(fake_transport):
    client = rpc_client.SchedulerClient(fake_transport, "t",
                                        version_cap="1.8")
    with pytest.raises(exception.VersionCapped, match="profile volume"):
        client.select_destinations(None, factories.request(profile="volume"),
                                   factories.uuids(1))


def test_an_explanation_for_an_older_caller_leaves_the_profile_out():
    explained = explain_obj.Explanation(
        considered=1, passed=1, summary="", profile="packed", packing="stack")
    primitive = explained.obj_to_primitive(target_version="1.0")
    assert not {"profile", "packing"} & set(primitive["gantt_object.data"])


def test_a_member_of_a_reserved_group_is_never_sent_to_an_older_worker():
    # placed by a worker that knows no reservations, it would be decided
    # anew, outside its group's plan, and its slot left held
    spec = factories.request()
    spec.group_slot = group_obj.GroupSlotRef(
        group_uuid="8c0a3b4e-1f2d-4c5b-9a6e-7d8f9a0b1c2d", slot=0)
    assert _sent(spec)["gantt_object.data"]["group_slot"][
        "gantt_object.data"]["slot"] == 0
    with pytest.raises(exception.VersionCapped, match="1.12"):
        _sent(spec, versions.manifest_for("1.10"))
