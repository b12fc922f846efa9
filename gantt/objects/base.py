"""Base class, registry and RPC serializer of Gantt's versioned objects."""

from oslo_versionedobjects import base as ovo_base


class GanttObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class GanttObject(ovo_base.VersionedObject,
                  ovo_base.ComparableVersionedObject):
    """Every Gantt wire object: namespace ``gantt``, dict-free by design."""

    OBJ_SERIAL_NAMESPACE = "gantt_object"
    OBJ_PROJECT_NAMESPACE = "gantt"

    def obj_to_dict(self):
        """The set fields as plain primitives (for logs, JSON and YAML)."""
        return {k: _plain(getattr(self, k))
                for k in self.fields if self.obj_attr_is_set(k)}


def _plain(value):
    if isinstance(value, GanttObject):
        return value.obj_to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


class GanttObjectSerializer(ovo_base.VersionedObjectSerializer):
    OBJ_BASE_CLASS = GanttObject
