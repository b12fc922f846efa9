"""Nova's wire objects, as Nova 34 sends and reads them, without Nova.

Each class carries the Nova object name, namespace (``nova``), serial
prefix (``nova_object``) and the version Nova 34 has, and declares only
the fields Gantt reads or writes; the fields of a primitive that a class
does not declare are ignored when it is read (ovo reads only declared
fields), so any 1.x a Nova sends is read. They live in a registry of their
own (:data:`CLASSES`), not oslo.versionedobjects' process-wide one: Gantt
has objects named ``RequestSpec``, ``Selection``, ``InstanceGroup``…
too, and ovo's registry is keyed by name alone.

Version histories are Nova's (``nova/objects/*.py``); the classes here
follow them only where a declared field changed.
"""

from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import exception as ovo_exc
from oslo_versionedobjects import fields

#: Nova object name -> the class that reads and writes it
CLASSES = {}


def register(cls):
    """Put ``cls`` in :data:`CLASSES` (not ovo's registry).

    NOTE: ``_make_class_properties`` is what ovo's own registry runs on a
    class it registers (it turns ``fields`` into properties); ovo has no
    public way to do that without adding the class to its process-wide
    registry.
    """
    ovo_base._make_class_properties(cls)
    CLASSES[cls.obj_name()] = cls
    return cls


class NovaObject(ovo_base.VersionedObject):
    """A Nova object on the wire: namespace ``nova``."""

    OBJ_SERIAL_NAMESPACE = "nova_object"
    OBJ_PROJECT_NAMESPACE = "nova"

    @classmethod
    def obj_class_from_name(cls, objname, objver):
        """The class of ``objname`` from :data:`CLASSES`, for any version
        of the same major (fields a newer minor added are ignored)."""
        found = CLASSES.get(objname)
        if found is None:
            raise ovo_exc.UnsupportedObjectError(objtype=objname)
        want = versionutils.convert_version_to_tuple(objver)
        have = versionutils.convert_version_to_tuple(found.VERSION)
        if want[0] != have[0]:
            raise ovo_exc.IncompatibleObjectVersion(
                objname=objname, objver=objver, supported=found.VERSION)
        return found

    @classmethod
    def _obj_from_primitive(cls, context, objver, primitive):
        """ovo's, with the object and field named in a refusal."""
        self = cls()
        self._context = context
        self.VERSION = objver
        data = cls._obj_primitive_field(primitive, "data")
        for name, field in self.fields.items():
            if name in data:
                try:
                    # setattr coerces (and refuses) the value
                    setattr(self, name,
                            field.from_primitive(self, name, data[name]))
                except (ValueError, TypeError) as exc:
                    raise ValueError("%s.%s: %s" % (cls.obj_name(), name,
                                                    exc)) from None
        changes = cls._obj_primitive_field(primitive, "changes", [])
        self._changed_fields = {x for x in changes if x in self.fields}
        return self

    def obj_load_attr(self, attrname):
        """An unset field reads as its default (or None when nullable)."""
        field = self.fields[attrname]
        if field.default != fields.UnspecifiedDefault:
            self.obj_set_defaults(attrname)
        elif field.nullable:
            setattr(self, attrname, None)
        else:
            raise ovo_exc.ObjectActionError(
                action="obj_load_attr", reason="%s.%s is not set" % (
                    self.obj_name(), attrname))

    def get(self, name, default=None):
        """The field's value if it is set (or defaults), else ``default``."""
        if name in self.fields and (self.obj_attr_is_set(name) or (
                self.fields[name].default != fields.UnspecifiedDefault)):
            value = getattr(self, name)
            return default if value is None else value
        return default


class NovaObjectSerializer(ovo_base.VersionedObjectSerializer):
    OBJ_BASE_CLASS = NovaObject


class _RawDict(fields.FieldType):
    """Any primitive dict, kept as it came (ImageMetaProps' hundred typed
    fields are read as data by the translation)."""

    @staticmethod
    def coerce(obj, attr, value):
        if not isinstance(value, dict):
            raise ValueError("%s must be a dict" % attr)
        return value


class RawDictField(fields.AutoTypedField):
    AUTO_TYPE = _RawDict()


@register
class Flavor(NovaObject):
    VERSION = "1.2"
    fields = {
        "id": fields.IntegerField(),
        "name": fields.StringField(nullable=True),
        "memory_mb": fields.IntegerField(),
        "vcpus": fields.IntegerField(),
        "root_gb": fields.IntegerField(),
        "ephemeral_gb": fields.IntegerField(),
        "flavorid": fields.StringField(),
        "swap": fields.IntegerField(),
        "extra_specs": fields.DictOfStringsField(),
    }


@register
class ImageMetaProps(NovaObject):
    """Every property as it came: see :class:`_RawDict`."""

    VERSION = "1.44"
    fields = {}

    @classmethod
    def _obj_from_primitive(cls, context, objver, primitive):
        self = super()._obj_from_primitive(context, objver, primitive)
        data = cls._obj_primitive_field(primitive, "data")
        if not isinstance(data, dict):
            raise ValueError("ImageMetaProps data must be a dict")
        self.data = data
        return self


@register
class ImageMeta(NovaObject):
    VERSION = "1.8"
    fields = {
        "id": fields.UUIDField(),
        "name": fields.StringField(),
        "disk_format": fields.StringField(),
        "container_format": fields.StringField(),
        "properties": fields.ObjectField("ImageMetaProps"),
    }


@register
class InstanceGroup(NovaObject):
    # Nova's 1.11 has ``policy`` (one) and ``_rules``; ``policies`` (a
    # list, read-only) is what older groups said
    VERSION = "1.11"
    fields = {
        "uuid": fields.UUIDField(),
        "name": fields.StringField(nullable=True),
        "user_id": fields.StringField(nullable=True),
        "project_id": fields.StringField(nullable=True),
        "policies": fields.ListOfStringsField(nullable=True),
        "policy": fields.StringField(nullable=True),
        "_rules": fields.DictOfStringsField(),
        "members": fields.ListOfStringsField(nullable=True),
        "hosts": fields.ListOfStringsField(nullable=True),
    }


@register
class CellMapping(NovaObject):
    VERSION = "1.1"
    fields = {
        "uuid": fields.UUIDField(),
        "name": fields.StringField(nullable=True),
    }


@register
class Destination(NovaObject):
    VERSION = "1.4"
    fields = {
        "host": fields.StringField(),
        "node": fields.StringField(nullable=True),
        "cell": fields.ObjectField("CellMapping", nullable=True),
        "aggregates": fields.ListOfStringsField(nullable=True, default=None),
        "allow_cross_cell_move": fields.BooleanField(default=False),
        "forbidden_aggregates": fields.SetOfStringsField(nullable=True,
                                                         default=None),
    }


@register
class RequestGroup(NovaObject):
    VERSION = "1.3"
    fields = {
        "use_same_provider": fields.BooleanField(default=True),
        "resources": fields.DictOfIntegersField(default={}),
        "required_traits": fields.SetOfStringsField(default=set()),
        "forbidden_traits": fields.SetOfStringsField(default=set()),
        "aggregates": fields.ListOfListsOfStringsField(default=[]),
        "forbidden_aggregates": fields.SetOfStringsField(default=set()),
        "requester_id": fields.StringField(nullable=True, default=None),
        "provider_uuids": fields.ListOfUUIDField(default=[]),
        "in_tree": fields.UUIDField(nullable=True, default=None),
    }


@register
class RequestLevelParams(NovaObject):
    VERSION = "1.1"
    fields = {
        "root_required": fields.SetOfStringsField(default=set()),
        "root_forbidden": fields.SetOfStringsField(default=set()),
        "same_subtree": fields.ListOfListsOfStringsField(default=list()),
    }


@register
class SchedulerLimits(NovaObject):
    """Nova's SchedulerLimits 1.0. ``numa_topology`` is always sent (as
    None: Gantt sets no NUMA limits), since Nova's ``to_dict`` (which its
    conductor calls on every Selection it builds on) reads every field."""

    VERSION = "1.0"
    fields = {
        "numa_topology": fields.ObjectField("NUMATopologyLimits",
                                            nullable=True, default=None),
        "vcpu": fields.IntegerField(nullable=True, default=None),
        "disk_gb": fields.IntegerField(nullable=True, default=None),
        "memory_mb": fields.IntegerField(nullable=True, default=None),
    }
    obj_relationships = {"numa_topology": [("1.0", "1.1")]}


@register
class RequestSpec(NovaObject):
    VERSION = "1.15"
    fields = {
        "image": fields.ObjectField("ImageMeta", nullable=True),
        "project_id": fields.StringField(nullable=True),
        "user_id": fields.StringField(nullable=True),
        "availability_zone": fields.StringField(nullable=True),
        "flavor": fields.ObjectField("Flavor", nullable=False),
        "num_instances": fields.IntegerField(default=1),
        "ignore_hosts": fields.ListOfStringsField(nullable=True),
        "force_hosts": fields.ListOfStringsField(nullable=True),
        "force_nodes": fields.ListOfStringsField(nullable=True),
        "requested_destination": fields.ObjectField("Destination",
                                                    nullable=True),
        "instance_group": fields.ObjectField("InstanceGroup", nullable=True),
        "scheduler_hints": fields.DictOfListOfStringsField(nullable=True),
        "instance_uuid": fields.UUIDField(),
        "is_bfv": fields.BooleanField(),
        "requested_resources": fields.ListOfObjectsField("RequestGroup",
                                                         nullable=True,
                                                         default=None),
        "request_level_params": fields.ObjectField("RequestLevelParams"),
    }


@register
class Selection(NovaObject, ovo_base.ComparableVersionedObject):
    """One destination for one instance, as Nova's conductor reads it.

    Version 1.0: Initial version
    Version 1.1: Added availability_zone
    """

    VERSION = "1.1"
    fields = {
        "compute_node_uuid": fields.UUIDField(),
        "service_host": fields.StringField(),
        "nodename": fields.StringField(),
        "cell_uuid": fields.UUIDField(),
        "limits": fields.ObjectField("SchedulerLimits", nullable=True),
        "allocation_request": fields.StringField(nullable=True),
        "allocation_request_version": fields.StringField(nullable=True),
        "availability_zone": fields.StringField(nullable=True),
    }
    obj_relationships = {"limits": [("1.0", "1.0")]}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 1):
            primitive.pop("availability_zone", None)


@register
class Aggregate(NovaObject):
    VERSION = "1.3"
    fields = {
        "id": fields.IntegerField(),
        "uuid": fields.UUIDField(nullable=False),
        "name": fields.StringField(),
        "hosts": fields.ListOfStringsField(nullable=True),
        "metadata": fields.DictOfStringsField(nullable=True),
    }


@register
class AggregateList(NovaObject):
    VERSION = "1.3"
    fields = {"objects": fields.ListOfObjectsField("Aggregate")}


@register
class Instance(NovaObject):
    VERSION = "2.8"
    fields = {
        "uuid": fields.UUIDField(),
        "host": fields.StringField(nullable=True),
        "node": fields.StringField(nullable=True),
    }


@register
class InstanceList(NovaObject):
    VERSION = "2.6"
    fields = {"objects": fields.ListOfObjectsField("Instance")}
