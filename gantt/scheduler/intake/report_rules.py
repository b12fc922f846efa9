"""What a report must satisfy before it touches the model.

Every agent's ComputeNode (and every standalone provider) passes these
checks before anything is stored or cached; a failure is an
``InvalidRequest`` naming the bad value, and nothing is changed. The stats
intake's fast path applies the very same rules to a report's primitive
(see ``intake.wire``), using :data:`MAX_LENGTH` from here.
"""

import math
import re

from oslo_utils import uuidutils

from gantt import exception
from gantt.objects import provider as provider_obj
from gantt.scheduler import vocabulary
from gantt.scheduler.state import topology

#: longest value the database stores for each string field of a report
MAX_LENGTH = {"host": 255, "nodename": 200, "availability_zone": 255}
_CANONICAL_UUID = re.compile(
    r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")


def supersedes(sequence, boot_id, held_sequence, held_boot_id):
    """Whether a report (``sequence``, ``boot_id``) replaces the one held.

    A newer sequence of the same boot does; so does any sequence of a
    boot other than the held one (an agent that restarted, whose sequence
    may start again lower). A report whose ``boot_id`` is None (an agent
    that does not say) is judged by its sequence alone.

    So a forged report can never lock an agent that sends its boot id out
    for good: whatever sequence the forgery held, the agent's next report
    is of another boot than the held one.
    """
    if boot_id is not None and boot_id != held_boot_id:
        return True
    return sequence > held_sequence


def validate_node(node):
    """Reject a report that would corrupt the model, naming the bad value."""
    _validate_identity(node)
    _validate_inventories(node)
    for trait in node.traits:
        vocabulary.validate_trait(trait)
    _validate_children(node)
    validate_location(node.location)


def validate_location(text):
    """A reported location's syntax (``room=r1/rack=b07``); its levels
    are checked against ``[topology] levels`` by the intake
    (:meth:`StatsService.check_location`).

    :raises: InvalidLocation (an InvalidRequest)
    """
    if text is not None:
        topology.Location.parse(text)


def _validate_identity(node):
    for field in ("uuid", "host", "nodename", "report_sequence"):
        if not node.obj_attr_is_set(field):
            raise exception.InvalidRequest(
                reason="ComputeNode.%s is required" % field)
    for field, limit in MAX_LENGTH.items():
        value = getattr(node, field)
        if value is not None and not 0 < len(value) <= limit:
            raise exception.InvalidRequest(
                reason="ComputeNode.%s must be 1 to %d characters"
                       % (field, limit))
    for agg in node.aggregates:
        if not uuidutils.is_uuid_like(agg):
            raise exception.InvalidRequest(
                reason="aggregate %r is not a uuid" % (agg,))
    validate_boot_id(node.boot_id)


def validate_boot_id(boot_id):
    """A report's ``boot_id``: None or a uuid (the canonical form is
    recognised first: oslo's check costs 5 us, on every report)."""
    if boot_id is None or (type(boot_id) is str
                           and _CANONICAL_UUID.match(boot_id)):
        return
    if not (
            type(boot_id) is str and len(boot_id) <= 36
            and uuidutils.is_uuid_like(boot_id)):
        raise exception.InvalidRequest(
            reason="ComputeNode.boot_id %r is not a uuid" % (boot_id,))


def _validate_inventories(node):
    seen = set()
    for inv in node.inventories:
        rc = vocabulary.validate_resource_class(inv.resource_class)
        if rc in seen:
            raise exception.InvalidRequest(
                reason="resource class %s reported twice" % rc)
        seen.add(rc)
        if inv.reserved > inv.total:
            raise exception.InvalidRequest(
                reason="%s: reserved %d exceeds total %d"
                       % (rc, inv.reserved, inv.total))
        if not 1 <= inv.min_unit <= inv.max_unit or inv.step_size < 1:
            raise exception.InvalidRequest(
                reason="%s: need 1 <= min_unit <= max_unit and step_size "
                       ">= 1" % rc)
        if inv.allocation_ratio <= 0:
            raise exception.InvalidRequest(
                reason="%s: allocation_ratio must be positive" % rc)


def validate_provider(provider, parents=None):
    """A provider of a report (child or standalone), checked like a node."""
    for field in ("uuid", "name"):
        if not provider.obj_attr_is_set(field):
            raise exception.InvalidRequest(
                reason="ResourceProvider.%s is required" % field)
    if not 0 < len(provider.name) <= MAX_LENGTH["nodename"]:
        raise exception.InvalidRequest(
            reason="ResourceProvider.name must be 1 to %d characters"
                   % MAX_LENGTH["nodename"])
    if parents is not None and provider.parent_provider_uuid not in parents:
        raise exception.InvalidRequest(
            reason="provider %s names parent %s, which is not reported "
                   "before it in the same tree"
                   % (provider.uuid, provider.parent_provider_uuid))
    for agg in provider.aggregates:
        if not uuidutils.is_uuid_like(agg):
            raise exception.InvalidRequest(
                reason="aggregate %r is not a uuid" % (agg,))
    _validate_inventories(provider)
    for trait in provider.traits:
        vocabulary.validate_trait(trait)


def _validate_children(node):
    """The tree under a node: known parents, no repeats, valid content."""
    parents = {node.uuid}
    for child in node.child_providers:
        if child.uuid in parents:
            raise exception.InvalidRequest(
                reason="provider %s appears twice in the tree of %s"
                       % (child.uuid, node.host))
        validate_provider(child, parents)
        parents.add(child.uuid)


def validate_standalone(report, max_capabilities):
    """What a standalone provider's report says it is (ProviderReport
    1.2), as the wire checks it (``gantt.rpcapi.validate``), for callers
    in the same process."""
    reason = provider_obj.kind_error(report.kind)
    if reason is not None:
        raise exception.InvalidRequest(
            reason="ProviderReport.kind %s" % reason)
    for field in ("service", "availability_zone"):
        value = getattr(report, field)
        if value is not None and not 0 < len(value) <= 255:
            raise exception.InvalidRequest(
                reason="ProviderReport.%s must be 1 to 255 characters"
                       % field)
    validate_location(report.location)
    if len(report.capabilities) > max_capabilities:
        raise exception.InvalidRequest(
            reason="ProviderReport.capabilities has %d entries; [wire] "
                   "max_report_capabilities is %d"
                   % (len(report.capabilities), max_capabilities))
    for key, value in report.capabilities.items():
        if not 0 < len(key) <= 255 or (
                type(value) is str and len(value) > 255):
            raise exception.InvalidRequest(
                reason="ProviderReport.capabilities[%r]: names and string "
                       "values are 1 to 255 characters" % key[:40])
        if type(value) is float and not math.isfinite(value):
            raise exception.InvalidRequest(
                reason="ProviderReport.capabilities[%r] must be finite"
                       % key[:40])
