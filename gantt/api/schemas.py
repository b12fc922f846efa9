"""JSON schemas of request bodies and query strings (jsonschema), with
Placement's constraints: the same bodies are accepted and refused."""

import copy

_NAME_CHARS = "[A-Z0-9_]"
CUSTOM_PATTERN = "^CUSTOM_%s+$" % _NAME_CHARS
NAME_PATTERN = "^%s+$" % _NAME_CHARS
UUID = {"type": "string", "format": "uuid"}
NULLABLE_UUID = {"anyOf": [UUID, {"type": "null"}]}


def _obj(properties, required=(), extra=False):
    return {"type": "object", "properties": properties,
            "required": list(required), "additionalProperties": extra}


# -- resource providers ---------------------------------------------------

PROVIDER_POST = _obj({"name": {"type": "string", "maxLength": 200},
                      "uuid": UUID}, ["name"])
PROVIDER_POST_1_14 = copy.deepcopy(PROVIDER_POST)
PROVIDER_POST_1_14["properties"]["parent_provider_uuid"] = NULLABLE_UUID
PROVIDER_PUT = copy.deepcopy(PROVIDER_POST)
del PROVIDER_PUT["properties"]["uuid"]
PROVIDER_PUT_1_14 = copy.deepcopy(PROVIDER_POST_1_14)
del PROVIDER_PUT_1_14["properties"]["uuid"]

_STR = {"type": "string"}
PROVIDERS_QUERY = {
    0: _obj({"name": _STR, "uuid": UUID}),
    3: _obj({"name": _STR, "uuid": UUID, "member_of": _STR}),
    4: _obj({"name": _STR, "uuid": UUID, "member_of": _STR,
             "resources": _STR}),
    14: _obj({"name": _STR, "uuid": UUID, "member_of": _STR,
              "resources": _STR, "in_tree": UUID}),
    18: _obj({"name": _STR, "uuid": UUID, "member_of": _STR,
              "resources": _STR, "in_tree": UUID, "required": _STR}),
}


def for_version(schemas, req):
    """The schema of the newest version in ``schemas`` (``{minor:
    schema}``) the request's microversion reaches."""
    from gantt.api import microversion
    return schemas[max(m for m in schemas if microversion.at_least(req, m))]


# -- resource classes and traits -------------------------------------------

RESOURCE_CLASS = _obj({"name": {"type": "string",
                                "pattern": CUSTOM_PATTERN,
                                "maxLength": 255}}, ["name"])
_TRAIT = {"type": "string", "minLength": 1, "maxLength": 255}
PROVIDER_TRAITS = _obj({"traits": {"type": "array", "items": _TRAIT},
                        "resource_provider_generation": {
                            "type": "integer"}},
                       ["traits", "resource_provider_generation"])
TRAITS_QUERY = _obj({"name": _STR, "associated": _STR})


# -- inventories ------------------------------------------------------------

MAX_INT = 0x7FFFFFFF
_COUNT = {"type": "integer", "maximum": MAX_INT, "minimum": 1}
INVENTORY = _obj({
    "resource_provider_generation": {"type": "integer"},
    "total": _COUNT,
    "reserved": {"type": "integer", "maximum": MAX_INT, "minimum": 0},
    "min_unit": _COUNT, "max_unit": _COUNT, "step_size": _COUNT,
    "allocation_ratio": {"type": "number", "maximum": 3.40282e+38},
}, ["total", "resource_provider_generation"])
INVENTORY_POST = copy.deepcopy(INVENTORY)
INVENTORY_POST["properties"]["resource_class"] = {
    "type": "string", "pattern": NAME_PATTERN}
INVENTORY_POST["required"] = ["total", "resource_class"]
INVENTORY_RECORD = copy.deepcopy(INVENTORY)
INVENTORY_RECORD["required"] = ["total"]
INVENTORIES = _obj({
    "resource_provider_generation": {"type": "integer"},
    "inventories": {"type": "object",
                    "patternProperties": {NAME_PATTERN: INVENTORY_RECORD}},
}, ["resource_provider_generation", "inventories"])


# -- usages -------------------------------------------------------------------

_ID = {"type": "string", "minLength": 1, "maxLength": 255}
USAGES_QUERY = _obj({"project_id": _ID, "user_id": _ID}, ["project_id"])
USAGES_QUERY_1_38 = copy.deepcopy(USAGES_QUERY)
USAGES_QUERY_1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": NAME_PATTERN + "|^all|^unknown$",
    "minLength": 1, "maxLength": 255}

# -- aggregates -------------------------------------------------------------

_AGG_LIST = {"type": "array", "items": UUID, "uniqueItems": True}
AGGREGATES_1_1 = copy.deepcopy(_AGG_LIST)
AGGREGATES_1_19 = _obj({"aggregates": copy.deepcopy(_AGG_LIST),
                        "resource_provider_generation": {
                            "type": "integer"}},
                       ["aggregates", "resource_provider_generation"])


# -- allocations --------------------------------------------------------------

_AMOUNTS = {"type": "object", "minProperties": 1,
            "patternProperties": {NAME_PATTERN: {"type": "integer",
                                                 "minimum": 1}},
            "additionalProperties": False}
ALLOCATIONS_1_0 = _obj({"allocations": {
    "type": "array", "minItems": 1,
    "items": _obj({"resource_provider": _obj({"uuid": UUID}, ["uuid"]),
                   "resources": _AMOUNTS},
                  ["resource_provider", "resources"])}}, ["allocations"])
ALLOCATIONS_1_8 = copy.deepcopy(ALLOCATIONS_1_0)
ALLOCATIONS_1_8["properties"].update(project_id=_ID, user_id=_ID)
ALLOCATIONS_1_8["required"] += ["project_id", "user_id"]
_UUID_KEY = "^[0-9a-fA-F-]{36}$"
ALLOCATIONS_1_12 = _obj({
    "allocations": {
        "type": "object", "minProperties": 1,
        "patternProperties": {_UUID_KEY: _obj(
            {"generation": {"type": "integer"}, "resources": _AMOUNTS},
            ["resources"])},
        "additionalProperties": False},
    "project_id": _ID, "user_id": _ID,
}, ["allocations", "project_id", "user_id"])
_DELETABLE = copy.deepcopy(ALLOCATIONS_1_12)
_DELETABLE["properties"]["allocations"]["minProperties"] = 0
ALLOCATIONS_1_28 = copy.deepcopy(_DELETABLE)
ALLOCATIONS_1_28["properties"]["consumer_generation"] = {
    "type": ["integer", "null"], "additionalProperties": False}
ALLOCATIONS_1_28["required"].append("consumer_generation")
_MAPPINGS = {"type": "object", "minProperties": 1, "patternProperties": {
    "[a-zA-Z0-9_-]{1,64}": {"type": "array", "minItems": 1,
                             "items": UUID}}}
ALLOCATIONS_1_34 = copy.deepcopy(ALLOCATIONS_1_28)
ALLOCATIONS_1_34["properties"]["mappings"] = _MAPPINGS
ALLOCATIONS_1_38 = copy.deepcopy(ALLOCATIONS_1_34)
ALLOCATIONS_1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": NAME_PATTERN, "minLength": 1,
    "maxLength": 255}
ALLOCATIONS_1_38["required"].append("consumer_type")

#: PUT /allocations/{consumer}: the body's schema from each microversion
ALLOCATIONS_PUT = {0: ALLOCATIONS_1_0, 8: ALLOCATIONS_1_8,
                   12: ALLOCATIONS_1_12, 28: ALLOCATIONS_1_28,
                   34: ALLOCATIONS_1_34, 38: ALLOCATIONS_1_38}


def _many(one):
    return {"type": "object", "minProperties": 1,
            "additionalProperties": False,
            "patternProperties": {_UUID_KEY: one}}


#: POST /allocations (from 1.13)
ALLOCATIONS_POST = {13: _many(_DELETABLE), 28: _many(ALLOCATIONS_1_28),
                    34: _many(ALLOCATIONS_1_34),
                    38: _many(ALLOCATIONS_1_38)}


# -- allocation candidates ----------------------------------------------------

_LIMIT = {"type": ["integer", "string"], "pattern": "^[1-9][0-9]*$",
          "minimum": 1, "minLength": 1}
_GROUPED = ("resources", "required", "member_of")


def _grouped(keys, suffix_pattern):
    return {"^%s(%s)?$" % (key, suffix_pattern): _STR for key in keys}


CANDIDATES_QUERY = {
    10: _obj({"resources": _STR}, ["resources"]),
    16: _obj({"resources": _STR, "limit": _LIMIT}, ["resources"]),
    17: _obj({"resources": _STR, "limit": _LIMIT, "required": _STR},
             ["resources"]),
    21: _obj({"resources": _STR, "limit": _LIMIT, "required": _STR,
              "member_of": _STR}, ["resources"]),
}
_PROPS_1_25 = {"limit": _LIMIT,
               "group_policy": {"type": "string",
                                "enum": ["none", "isolate"]}}
for _minor, _keys, _suffix, _more in (
        (25, _GROUPED, "[1-9][0-9]*", {}),
        (31, _GROUPED + ("in_tree",), "[1-9][0-9]*", {}),
        (33, _GROUPED + ("in_tree",), "[a-zA-Z0-9_-]{1,64}", {}),
        (35, _GROUPED + ("in_tree",), "[a-zA-Z0-9_-]{1,64}",
         {"root_required": _STR}),
        (36, _GROUPED + ("in_tree",), "[a-zA-Z0-9_-]{1,64}",
         {"root_required": _STR, "same_subtree": _STR})):
    CANDIDATES_QUERY[_minor] = dict(
        _obj(dict(_PROPS_1_25, **_more)),
        patternProperties=_grouped(_keys, _suffix))


# -- reshaper -----------------------------------------------------------------

def _reshaper(allocations):
    allocations = copy.deepcopy(allocations)
    allocations["minProperties"] = 0
    return _obj({"inventories": {"type": "object",
                                 "patternProperties": {_UUID_KEY: INVENTORIES},
                                 "minProperties": 1,
                                 "additionalProperties": False},
                 "allocations": allocations},
                ["inventories", "allocations"])


RESHAPER = {30: _reshaper(ALLOCATIONS_POST[28]),
            34: _reshaper(ALLOCATIONS_POST[34]),
            38: _reshaper(ALLOCATIONS_POST[38])}
