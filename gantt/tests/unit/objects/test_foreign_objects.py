"""Gantt's objects in a process that registers another project's objects
under the same names (Nova's ``Selection``, ``RequestSpec``... where
Nova's tests or services run ``gantt.fixture``): ovo's registry is one
per process and keyed by name alone, so Gantt must pick its own."""

import copy

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import exception as ovo_exc
from oslo_versionedobjects import fields
import pytest

from gantt import objects
from gantt.objects import base
from gantt.objects import selection
from gantt.rpcapi import versions

objects.register_all()


@pytest.fixture
def foreign():
    """A newer ``Selection`` and an object whose child nobody
    registered, both of namespace ``nova``; the registry restored
    afterwards."""
    saved = copy.copy(dict(base.GanttObjectRegistry.obj_classes()))
    saved = {name: list(classes) for name, classes in saved.items()}
    versions._needing_backport.cache_clear()
    before = versions.needing_backport(versions.manifest_for("1.0"))
    versions._needing_backport.cache_clear()

    class Selection(ovo_base.VersionedObject):
        OBJ_PROJECT_NAMESPACE = "nova"
        VERSION = "9.9"
        fields = {"service_host": fields.StringField()}

    class SchedulerLimits(ovo_base.VersionedObject):
        OBJ_PROJECT_NAMESPACE = "nova"
        VERSION = "1.0"
        fields = {"numa_topology": fields.ObjectField(
            "NUMATopologyLimits", nullable=True)}

    ovo_base.VersionedObjectRegistry.register(Selection)
    ovo_base.VersionedObjectRegistry.register(SchedulerLimits)
    yield before
    registry = base.GanttObjectRegistry.obj_classes()
    registry.clear()
    registry.update(saved)
    versions._needing_backport.cache_clear()


def test_the_backport_plan_ignores_foreign_objects(foreign):
    plan = versions.needing_backport(versions.manifest_for("1.0"))

    assert plan == foreign
    assert "SchedulerLimits" not in plan


def test_a_primitive_is_read_as_gantts_class(foreign):
    sel = selection.Selection(service_host="h1", nodename="h1")
    primitive = sel.obj_to_primitive()

    read = base.GanttObject.obj_from_primitive(primitive)

    assert type(read) is type(sel)
    assert read.service_host == sel.service_host


def test_a_name_only_another_project_has_is_refused(foreign):
    with pytest.raises(ovo_exc.UnsupportedObjectError,
                       match="SchedulerLimits"):
        base.GanttObject.obj_class_from_name("SchedulerLimits", "1.0")
