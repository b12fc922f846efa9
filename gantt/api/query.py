"""Query-string parameters shared by ``GET /resource_providers`` and
``GET /allocation_candidates``: resources, required traits, member_of and
in_tree, each checked with Placement's rules and messages (400 on bad
input, naming what was expected and what came)."""

import dataclasses

from oslo_utils import uuidutils

from gantt.api import errors
from gantt.api import microversion

_FORM = "?resources=VCPU:2,MEMORY_MB:1024"


@dataclasses.dataclass(frozen=True)
class Traits:
    """``required``: a list of any-of sets (ANDed); ``forbidden``: a set."""

    required: tuple = ()
    forbidden: frozenset = frozenset()


def resources(value):
    """``VCPU:2,MEMORY_MB:1024`` as ``{class: amount}``."""
    if value.strip() == "":
        raise errors.bad_request(
            "Badly formed resources parameter. Expected resources query "
            "string parameter in form: %s. Got: empty string." % _FORM)
    result = {}
    for item in value.split(","):
        try:
            rc, amount = item.split(":")
        except ValueError:
            raise errors.bad_request(
                "Badly formed resources parameter. Expected resources "
                "query string parameter in form: %s. Got: %s." % (
                    _FORM, item)) from None
        result[rc] = _amount(rc, amount)
    return result


def _amount(rc, text):
    try:
        amount = int(text)
    except ValueError:
        raise errors.bad_request(
            "Requested resource %s expected positive integer amount. "
            "Got: %s." % (rc, text)) from None
    if amount < 1:
        raise errors.bad_request(
            "Requested resource %s requires amount >= 1. Got: %d." % (
                rc, amount))
    return amount


def traits(req, suffix=""):
    """The ``required<suffix>`` parameters as :class:`Traits`: forbidden
    (``!T``) from 1.22, ``in:A,B`` and repeating the key from 1.39."""
    allow_forbidden = microversion.at_least(req, 22)
    allow_any = microversion.at_least(req, 39)
    values = req.GET.getall("required" + suffix)
    if not allow_any:
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        more, less = trait_value(value, allow_forbidden, allow_any)
        required += more
        forbidden |= less
    return Traits(tuple(required), frozenset(forbidden))


def trait_value(value, allow_forbidden, allow_any):
    """One ``required`` value: ([any-of sets], {forbidden})."""
    if value.startswith("in:"):
        return _any_of(value, allow_any)
    names = [t.strip() for t in value.split(",")]
    forbidden = {t.lstrip("!") for t in names if t.startswith("!")}
    if not all(names) or not all(forbidden):
        form = ("HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden
                else "HW_CPU_X86_VMX,CUSTOM_MAGIC")
        raise errors.bad_request(
            "Invalid query string parameters: Expected 'required' "
            "parameter value of the form: %s. Got an empty trait in: %s" % (
                form, value))
    if forbidden and not allow_forbidden:
        raise errors.bad_request(
            "Invalid query string parameters: Expected 'required' "
            "parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. "
            "Got: %s" % value)
    return [{t} for t in names if not t.startswith("!")], forbidden


def _any_of(value, allowed):
    if not allowed:
        raise errors.bad_request(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
            "microversion 1.39. Got: %s" % value)
    names = {t.strip() for t in value[3:].split(",")}
    if not all(names):
        raise errors.bad_request(
            "Invalid query string parameters: Expected 'required' "
            "parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. "
            "Got an empty trait in: %s" % value)
    if any(t.startswith("!") for t in names):
        raise errors.bad_request(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden "
            "traits. Got: %s" % value)
    return [names], set()


def member_of(req, suffix=""):
    """The ``member_of<suffix>`` parameters: ([any-of sets], {forbidden});
    several from 1.24, forbidden (``!``, ``!in:``) from 1.32."""
    key = "member_of" + suffix
    values = req.GET.getall(key)
    if len(values) > 1 and not microversion.at_least(req, 24):
        raise errors.bad_request(
            "Multiple member_of%s parameters are not supported" % suffix)
    required, forbidden = [], set()
    for value in values:
        more, less = member_of_value(value)
        if more:
            required.append(more)
        if less:
            if not microversion.at_least(req, 32):
                raise errors.bad_request(
                    "Forbidden member_of%s parameters are not supported in "
                    "the specified microversion" % suffix)
            forbidden |= less
    return required, forbidden


def member_of_value(value):
    """One ``member_of`` value: (required any-of set, forbidden set)."""
    if "," in value and not value.startswith(("in:", "!in:")):
        raise errors.bad_request(
            "Multiple values for 'member_of' must be prefixed with the "
            "'in:' or '!in:' keyword using the valid microversion. "
            "Got: %s" % value)
    required = forbidden = set()
    if value.startswith("!in:"):
        forbidden = set(value[4:].split(","))
    elif value.startswith("!"):
        forbidden = {value[1:]}
    elif value.startswith("in:"):
        required = set(value[3:].split(","))
    else:
        required = {value}
    for uuid in required | forbidden:
        if not uuidutils.is_uuid_like(uuid):
            raise errors.bad_request(
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: %s" % uuid)
    return required, forbidden


def in_tree(value):
    uuid = value.strip()
    if not uuidutils.is_uuid_like(uuid):
        raise errors.bad_request(
            "Invalid query string parameters: Expected 'in_tree' parameter "
            "to be a format of uuid. Got: %s" % value)
    return uuid
