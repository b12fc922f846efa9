"""ProviderReport 1.2 on the wire: what a standalone provider may say it
is, what the wire refuses, what an older worker gets, and retire_provider
under a version cap."""

import copy

import pytest

from gantt import exception
from gantt.objects import base as objects_base
from gantt.objects import compute_node
from gantt.objects import provider as provider_obj
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import validate
from gantt.tests import factories

DATA = "gantt_object.data"
CTR = factories.host_uuid("provider/ctr")
INSTANCE = "33333333-3333-4333-8333-333333333333"
CAPS = {"thin_provisioning_support": True, "total_capacity_gb": 1000.5,
        "max_volumes": 100, "volume_backend_name": "lvm"}


def report(**fields):
    return provider_obj.ProviderReport(
        provider=provider_obj.ResourceProvider(
            uuid=CTR, name="ctr-1", inventories=[compute_node.Inventory(
                resource_class="VCPU", total=4)]),
        report_sequence=1, **fields)


def primitive(**fields):
    return objects_base.GanttObjectSerializer().serialize_entity(
        None, report(**fields))


def check(prim):
    validate.check_arguments("update_provider", {"report": prim})


def test_a_full_report_passes_and_keeps_its_types():
    prim = primitive(kind="volume", service="cinder-volume@lvm",
                     availability_zone="az1", capabilities=CAPS,
                     instance_uuid=INSTANCE)
    check(prim)
    back = objects_base.GanttObjectSerializer().deserialize_entity(
        None, copy.deepcopy(prim))
    assert back.capabilities == CAPS
    assert [type(back.capabilities[k]) for k in sorted(CAPS)] == [
        int, bool, float, str]
    assert back.kind == "volume"


@pytest.mark.parametrize("kind", [
    "Volume", "", "9lives", "a" * 33, "vol ume", "compute"])
def test_a_kind_that_is_no_short_lower_case_identifier_is_refused(kind):
    prim = primitive()
    prim[DATA]["kind"] = kind
    with pytest.raises(exception.InvalidRequest, match="report.kind"):
        check(prim)


@pytest.mark.parametrize("value, why", [
    (None, "must be a string, an integer, a float or a boolean"),
    ([1], "must be a string, an integer, a float or a boolean"),
    ({"a": 1}, "must be a string, an integer, a float or a boolean"),
    ("x" * 256, "at most 255 characters"),
    (2 ** 63, "between"),
    (float("nan"), "finite"),
])
def test_a_capability_value_out_of_bounds_is_refused(value, why):
    prim = primitive()
    prim[DATA]["capabilities"] = {"k": value}
    with pytest.raises(exception.InvalidRequest, match=why) as err:
        check(prim)
    assert "report.capabilities['k']" in str(err.value)


def test_more_capabilities_than_the_wire_limit_are_refused():
    prim = primitive(capabilities={"k%d" % i: i for i in range(3)})
    limits = validate.Limits(max_report_capabilities=2)
    with pytest.raises(exception.InvalidRequest,
                       match="max_report_capabilities is 2"):
        validate.check_arguments("update_provider", {"report": prim},
                                 limits)
    validate.check_arguments("update_provider", {"report": prim},
                             validate.Limits(max_report_capabilities=3))


def test_an_older_worker_gets_a_1_1_report_without_the_new_fields():
    full = report(kind="container", service="zun", capabilities=CAPS,
                  instance_uuid=INSTANCE, availability_zone="az1")
    old = full.obj_to_primitive(target_version="1.1")
    assert not set(provider_obj.ProviderReport.KIND_FIELDS) & set(
        old[DATA])
    assert full.says_more_than_1_1()
    assert not report().says_more_than_1_1()
    assert not report(kind="pool").says_more_than_1_1()


def test_retire_provider_checks_its_arguments():
    validate.check_arguments("retire_provider", {
        "provider_uuid": CTR, "generation": 3})
    for bad in ({"provider_uuid": "nope", "generation": 3},
                {"provider_uuid": CTR, "generation": -1},
                {"provider_uuid": CTR, "generation": True}):
        with pytest.raises(exception.InvalidRequest):
            validate.check_arguments("retire_provider", bad)


def test_a_kind_and_retire_need_rpc_api_1_9(fake_transport):
    client = rpc_client.SchedulerClient(fake_transport, "t",
                                        version_cap="1.8")
    with pytest.raises(exception.VersionCapped) as err:
        client.update_provider(None, report(kind="volume"))
    assert err.value.kwargs["version"] == "1.9"
    with pytest.raises(exception.VersionCapped):
        client.retire_provider(None, CTR, 3)
