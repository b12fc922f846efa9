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
