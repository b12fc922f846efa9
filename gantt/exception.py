"""Domain exceptions: every failure a caller can act on has a type here.

Each exception renders its message from ``msg_fmt`` and keeps its keyword
arguments in ``kwargs`` so that oslo.messaging can rebuild it on the caller's
side (the caller must list ``gantt.exception`` in ``allowed_remote_exmods``;
callers that do not import gantt receive a ``RemoteError`` whose
``exc_type`` is the class name below, which is a stable part of the wire
contract).
"""


class GanttException(Exception):
    """Base class: ``msg_fmt`` % kwargs becomes the message."""

    msg_fmt = "An unknown error occurred."
    #: stable machine-readable code, never changed once released
    code = "gantt.unknown"

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                # NOTE: a bad format argument must never hide the error itself
                message = self.msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self):
        return self.message


class NoValidHost(GanttException):
    msg_fmt = "No valid host was found. %(reason)s"
    code = "gantt.no_valid_host"


class ProvidersFull(NoValidHost):
    """Every provider the request's rules allow is full: some host passed
    every rule but room (zone, traits, group, the named instance…), and
    none had room left. For a container service: "create another
    instance". A subclass of NoValidHost, so callers that catch that keep
    working; ``hosts`` is how many hosts were full."""

    msg_fmt = ("All %(hosts)d provider(s) the request may use are full; "
               "add capacity (another instance) and ask again. %(reason)s")
    code = "gantt.providers_full"


class InvalidRequest(GanttException):
    msg_fmt = "Invalid request: %(reason)s"
    code = "gantt.invalid_request"


class HostNameTaken(InvalidRequest):
    """A report names a host that another compute node provider holds:
    one host name is one provider (see doc/source/admin/operating.rst for
    re-deploying a host under a new uuid)."""

    msg_fmt = ("Host %(host)s is compute node %(holder)s; a report of "
               "provider %(uuid)s under that name is refused")
    code = "gantt.host_name_taken"


class UnknownProfile(InvalidRequest):
    """A request names a scheduling profile this scheduler does not have
    (``[scheduler] profiles``); nothing was changed. A subclass of
    InvalidRequest."""

    msg_fmt = ("Unknown scheduling profile %(profile)s; this scheduler has: "
               "%(known)s")
    code = "gantt.unknown_profile"


class PackingRefused(InvalidRequest):
    """A request names a packing policy that does not exist, or that its
    profile does not let requests choose (``request_packing``); nothing
    was changed. A subclass of InvalidRequest."""

    msg_fmt = "Packing policy %(packing)s refused: %(reason)s"
    code = "gantt.packing_refused"


class InvalidLocation(InvalidRequest):
    """A reported location is not a path of known levels in the
    configured order (``room=r1/rack=b07``, see
    doc/source/admin/topology.rst); nothing was changed. A subclass of
    InvalidRequest."""

    msg_fmt = "Invalid location %(location)s: %(reason)s"
    code = "gantt.invalid_location"


class UnknownLevel(InvalidRequest):
    """A group policy names a level ``[topology] levels`` does not have;
    nothing was changed. A subclass of InvalidRequest."""

    msg_fmt = "Unknown topology level %(level)s; levels: %(levels)s"
    code = "gantt.unknown_level"


class HostNotFound(InvalidRequest):
    """A call names hosts the scheduler has never heard of (a typo, or a
    host whose agent has not reported yet); nothing was stored. A subclass
    of InvalidRequest: callers that catch that catch this too."""

    msg_fmt = ("Unknown host(s) %(hosts)s: no compute host of that name has "
               "reported to the scheduler")
    code = "gantt.host_not_found"


class MaxRetriesExceeded(GanttException):
    msg_fmt = ("Exhausted all hosts available for retrying build failures "
               "for instance %(instance_uuid)s: %(reason)s")
    code = "gantt.max_retries_exceeded"


class ClaimConflict(GanttException):
    msg_fmt = ("Resource provider %(provider)s changed (generation %(seen)s) "
               "while claiming for consumer %(consumer)s")
    code = "gantt.claim_conflict"


class ConsumerConflict(ClaimConflict):
    """The consumer's claim changed under this call, or it holds a claim
    the call would have to replace without being asked to.

    Nothing was changed by the call that gets it. A caller may read the
    consumer's claim again and retry, release it first, or (for
    ``select_destinations``) ask for a replacement with ``replace=True``.
    """

    msg_fmt = "Consumer %(consumer)s: %(reason)s"
    code = "gantt.consumer_conflict"


class GroupSlotTaken(ConsumerConflict):
    """A member names a slot of a holistic group that another member took
    over already, or a reserve or extend of the group raced another for
    its slot numbers; nothing was changed. A subclass of
    ConsumerConflict."""

    code = "gantt.group_slot_taken"


class CapacityExceeded(GanttException):
    msg_fmt = ("Provider %(provider)s cannot supply %(amount)d "
               "%(resource_class)s to consumer %(consumer)s: %(reason)s")
    code = "gantt.capacity_exceeded"


class GroupPolicyViolation(GanttException):
    msg_fmt = ("Placing consumer %(consumer)s on %(host)s would break the "
               "%(policy)s policy of server group %(group)s")
    code = "gantt.group_policy_violation"


class ProviderNotFound(GanttException):
    msg_fmt = "Resource provider %(uuid)s is not known to the scheduler"
    code = "gantt.provider_not_found"


class ProviderInUse(GanttException):
    msg_fmt = ("Resource provider %(uuid)s cannot be deleted: %(consumers)d "
               "consumer(s) hold allocations on it")
    code = "gantt.provider_in_use"


class ProviderConflict(GanttException):
    """``retire_provider``: the provider's generation is no longer the one
    given (something was allocated or released there, or its inventory
    changed, since); nothing was retired. Look again (``gantt host-show``)
    and retire with the new generation if it is still vacant."""

    msg_fmt = ("Resource provider %(uuid)s is at generation %(actual)s, not "
               "%(expected)s: not retired")
    code = "gantt.provider_conflict"


class ConfigurationError(GanttException):
    msg_fmt = "Configuration error: %(reason)s"
    code = "gantt.configuration_error"


class VersionCapped(GanttException):
    """Raised to the caller before anything is sent: the method is newer
    than the RPC API version the caller is capped at."""

    msg_fmt = ("%(method)s needs RPC API %(version)s, but [upgrade_levels] "
               "scheduler caps what this caller sends at %(cap)s (for "
               "workers not upgraded yet); raise or remove the cap once "
               "every worker serves %(version)s")
    code = "gantt.version_capped"


class ServiceUnavailable(GanttException):
    """Retryable: nothing was decided (a claim made is undone or kept once;
    retrying with the same instance uuids replaces it)."""

    msg_fmt = "The scheduler cannot serve this request now: %(reason)s"
    code = "gantt.service_unavailable"


class MessagingUnavailable(GanttException):
    msg_fmt = ("Cannot reach the message broker at %(url)s: %(reason)s")
    code = "gantt.messaging_unavailable"


class InternalError(GanttException):
    """Anything the worker did not expect while handling a message: the
    traceback is in the worker's log, the caller gets only this."""

    msg_fmt = ("The scheduler failed to handle %(method)s; the error is "
               "logged by worker %(worker)s")
    code = "gantt.internal_error"
