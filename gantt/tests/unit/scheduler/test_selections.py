"""Selections are built without ovo's coercion: they must be the same."""

import pytest

from gantt.objects import base
from gantt.objects import selection as selection_obj
from gantt.scheduler import selections
from gantt.tests import factories
from gantt.tests.unit.scheduler import helpers

CELL = "c0c0c0c0-0000-4000-8000-000000000001"
VM = "11111111-1111-4111-8111-111111111111"
CHILD = "22222222-2222-4222-8222-222222222222"


def _coerced(view, row, resources, weight, claimed, allocations):
    """The same Selection through the objects' constructors (coercing)."""
    allocations = allocations or {view.uuids[row]: resources}
    limits = {rc: int(view.capacity(view.rc_column(rc))[row])
              for rc in resources}
    return selection_obj.Selection(
        service_host=view.hosts[row], nodename=view.nodenames[row],
        compute_node_uuid=view.uuids[row], cell_uuid=view.cell_uuid(row),
        weight=weight, limits=limits,
        allocation_request=selection_obj.AllocationRequest(allocations=[
            selection_obj.AllocationItem(resource_provider_uuid=u,
                                         resources=dict(r))
            for u, r in sorted(allocations.items())]),
        consumer_uuid=VM, claimed=claimed)


@pytest.mark.parametrize("cell, claimed, tree", [
    (CELL, True, False), (None, False, False), (CELL, False, True)])
def test_a_trusted_selection_is_what_the_constructors_build(cell, claimed,
                                                            tree):
    view = helpers.make_view(helpers.node("h1", cell_uuid=cell),
                             helpers.node("h2", cell_uuid=cell))
    resources = {"VCPU": 2, "MEMORY_MB": 2048}
    allocations = ({factories.host_uuid("h2"): {"VCPU": 2},
                    CHILD: {"MEMORY_MB": 2048}} if tree else None)
    built = selections.build(view, 1, VM, resources, 3, claimed,
                             allocations=allocations)
    expected = _coerced(view, 1, resources, 3.0, claimed, allocations)
    assert built.obj_to_primitive() == expected.obj_to_primitive()
    assert built.obj_what_changed() == expected.obj_what_changed()
    assert built == expected
    # and it travels like any other
    serializer = base.GanttObjectSerializer()
    back = serializer.deserialize_entity(
        None, serializer.serialize_entity(None, built))
    assert back == expected
    assert isinstance(back.weight, float) and back.weight == 3.0
