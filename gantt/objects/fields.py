"""Field types used by Gantt objects, beyond oslo.versionedobjects' own."""

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
UUIDField = fields.UUIDField
NonNegativeIntegerField = fields.NonNegativeIntegerField


class DictOfFloatsField(fields.AutoTypedField):
    AUTO_TYPE = fields.Dict(fields.Float())


class ListOfListsOfStringsField(fields.AutoTypedField):
    AUTO_TYPE = fields.List(fields.List(fields.String()))


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


class RequestGroupPolicy(fields.Enum):
    NONE = "none"
    ISOLATE = "isolate"
    ALL = (NONE, ISOLATE)

    def __init__(self):
        super().__init__(valid_values=RequestGroupPolicy.ALL)


class RequestGroupPolicyField(fields.BaseEnumField):
    AUTO_TYPE = RequestGroupPolicy()
