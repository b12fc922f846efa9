"""Nova's request pre-filters, configured by Nova's option names in
Gantt's config, on requests from Nova's own client."""

import uuid

from nova import exception as nova_exception
from nova import objects
import pytest

from gantt.tests.functional import waiting
from gantt.tests.nova_e2e import nova_requests as nr
from gantt.tests.nova_e2e.conftest import HOSTS


def _host_of(gantt, spec):
    [selections] = gantt.query.select_destinations(
        nr.ctxt(), spec, [spec.instance_uuid], return_objects=True,
        return_alternates=True)
    return [s.service_host for s in selections]


def test_disabled_computes_are_never_chosen(gantt):
    gantt.report(HOSTS[0])
    gantt.report(*HOSTS[1:], disabled=True)

    # the claimed host, and no alternate: the others are disabled
    assert _host_of(gantt, nr.spec()) == [HOSTS[0]]


def test_image_type_support_is_required_when_configured(gantt_with):
    gantt = gantt_with("[scheduler]\n"
                       "query_placement_for_image_type_support = true\n")
    gantt.report(HOSTS[0], traits=["COMPUTE_IMAGE_TYPE_RAW"])
    gantt.report(HOSTS[1], traits=["COMPUTE_IMAGE_TYPE_QCOW2"])

    # nr.image() is a qcow2 image
    assert _host_of(gantt, nr.spec()) == [HOSTS[1]]


def test_tenant_isolation_keeps_a_project_in_its_aggregate(gantt_with):
    gantt = gantt_with("[scheduler]\n"
                       "limit_tenants_to_placement_aggregate = true\n"
                       "placement_aggregate_required_for_tenants = true\n")
    gantt.report(*HOSTS)
    aggregate = objects.Aggregate(
        id=7, uuid=str(uuid.uuid4()), name="tenant-hosts",
        hosts=[HOSTS[2]], metadata={"filter_tenant_id": nr.PROJECT})

    # no aggregate names the project yet: no host at all
    with pytest.raises(nova_exception.NoValidHost):
        _host_of(gantt, nr.spec())
    gantt.query.update_aggregates(nr.ctxt(), [aggregate])

    assert _wait_for_hosts(gantt, nr.spec) == [HOSTS[2]]


def test_isolated_aggregates_keep_other_requests_out(gantt_with):
    gantt = gantt_with("[scheduler]\n"
                       "enable_isolated_aggregate_filtering = true\n")
    gantt.report(*HOSTS[:2], traits=["CUSTOM_GOLD"])
    aggregate = objects.Aggregate(
        id=8, uuid=str(uuid.uuid4()), name="gold", hosts=[HOSTS[0]],
        metadata={"trait:CUSTOM_GOLD": "required"})
    gantt.query.update_aggregates(nr.ctxt(), [aggregate])

    plain = _wait_for_hosts(gantt, nr.spec, expected=[HOSTS[1]])
    gold = _host_of(gantt, nr.spec(flavor=nr.flavor(
        extra_specs={"trait:CUSTOM_GOLD": "required"})))

    assert plain == [HOSTS[1]]
    assert sorted(gold) == sorted(HOSTS[:2])


def _wait_for_hosts(gantt, make_spec, expected=None):
    """The hosts of a new request once the cast before it took effect."""
    def hosts():
        found = _host_of(gantt, make_spec())
        return (found,) if expected is None or found == expected else None
    return waiting.until("the hosts %s" % (expected or "of a request"),
                         hosts, ignoring=nova_exception.NoValidHost,
                         interval=0.2)[0]
