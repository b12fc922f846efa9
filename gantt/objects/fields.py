"""Field types used by Gantt objects, beyond oslo.versionedobjects' own."""

import re

from oslo_versionedobjects import fields

# Re-exported so that object modules import fields from one place.
BooleanField = fields.BooleanField
DateTimeField = fields.DateTimeField
DictOfIntegersField = fields.DictOfIntegersField
DictOfStringsField = fields.DictOfStringsField
DictOfListOfStringsField = fields.DictOfListOfStringsField
FloatField = fields.FloatField
IntegerField = fields.IntegerField
ListOfIntegersField = fields.ListOfIntegersField
ListOfObjectsField = fields.ListOfObjectsField
ListOfStringsField = fields.ListOfStringsField
ObjectField = fields.ObjectField
StringField = fields.StringField
NonNegativeIntegerField = fields.NonNegativeIntegerField


class UUID(fields.UUID):
    """A uuid string, checked.

    oslo.versionedobjects' own UUID type only warns about a malformed
    value, and does it inside ``warnings.catch_warnings`` (tens of
    microseconds per field, the largest cost of deserialising a Selection).
    A malformed uuid on the wire is refused here with ValueError, which
    the RPC serializer turns into a typed "malformed object" error.
    """

    _MATCH = re.compile(fields.UUID.PATTERN).match

    def coerce(self, obj, attr, value):
        text = str(value)
        if self._MATCH(text) is None:
            raise ValueError("%s is not a uuid: %r" % (attr, value))
        return text


class UUIDField(fields.AutoTypedField):
    AUTO_TYPE = UUID()


class DictOfFloatsField(fields.AutoTypedField):
    AUTO_TYPE = fields.Dict(fields.Float())


class ListOfListsOfStringsField(fields.AutoTypedField):
    AUTO_TYPE = fields.List(fields.List(fields.String()))


class ListOfListsOfIntegersField(fields.AutoTypedField):
    AUTO_TYPE = fields.List(fields.List(fields.Integer()))


class GroupPolicy(fields.Enum):
    AFFINITY = "affinity"
    ANTI_AFFINITY = "anti-affinity"
    SOFT_AFFINITY = "soft-affinity"
    SOFT_ANTI_AFFINITY = "soft-anti-affinity"
    ALL = (AFFINITY, ANTI_AFFINITY, SOFT_AFFINITY, SOFT_ANTI_AFFINITY)

    def __init__(self):
        super().__init__(valid_values=GroupPolicy.ALL)


class GroupPolicyField(fields.BaseEnumField):
    AUTO_TYPE = GroupPolicy()


class LevelRule(fields.Enum):
    """A group's rule at one level (gantt.scheduler.state.topology)."""

    ALL = ("affinity", "anti-affinity", "max-per", "spread",
           "soft-affinity", "soft-anti-affinity")

    def __init__(self):
        super().__init__(valid_values=LevelRule.ALL)


class LevelRuleField(fields.BaseEnumField):
    AUTO_TYPE = LevelRule()


class RequestGroupPolicy(fields.Enum):
    NONE = "none"
    ISOLATE = "isolate"
    ALL = (NONE, ISOLATE)

    def __init__(self):
        super().__init__(valid_values=RequestGroupPolicy.ALL)


class RequestGroupPolicyField(fields.BaseEnumField):
    AUTO_TYPE = RequestGroupPolicy()


#: the JSON types a provider capability's value may have (bool before int:
#: ``True`` is an int to Python, and stays a boolean here)
CAPABILITY_TYPES = (bool, int, float, str)


class CapabilityValue(fields.FieldType):
    """A typed capability value: a string, an integer, a float or a
    boolean, kept as the type it was sent in (``True`` stays a boolean,
    ``1000.5`` a float, ``"lvm"`` a string).

    oslo.versionedobjects has no such field: its ``Dict`` coerces every
    value to one type. Anything else (null, a list, an object) is refused
    with ValueError; the wire check (``gantt.rpcapi.validate``) refuses it
    first, with its path, and limits the sizes.
    """

    @staticmethod
    def coerce(obj, attr, value):
        if type(value) not in CAPABILITY_TYPES:
            raise ValueError("%s: a capability value must be a string, an "
                             "integer, a float or a boolean, got %s"
                             % (attr, type(value).__name__))
        return value


class DictOfCapabilitiesField(fields.AutoTypedField):
    """``{name: str | int | float | bool}`` (see :class:`CapabilityValue`)."""

    AUTO_TYPE = fields.Dict(CapabilityValue())


class GroupObjective(fields.Enum):
    ALL = ("most-spread", "fewest-hosts", "balanced")

    def __init__(self):
        super().__init__(valid_values=GroupObjective.ALL)


class GroupObjectiveField(fields.BaseEnumField):
    AUTO_TYPE = GroupObjective()
