"""The RPC boundary: client for callers, thin endpoint for the server."""

#: RPC API version this code's workers serve; see the history in
#: gantt.rpcapi.client
RPC_API_VERSION = "1.13"

#: what the client asks for unless a method needs more: calls of the 1.0
#: methods keep working against workers that serve only 1.0
CLIENT_BASE_VERSION = "1.0"

#: AMQP exchange of every Gantt topic, set on each Target so that callers do
#: not depend on their own ``control_exchange`` option
EXCHANGE = "gantt"

#: context key naming the worker that cast a ``provider_usage_changed``:
#: every worker gets its own fanout casts back, and skips them unread
SENDER_CONTEXT_KEY = "gantt_sender"

#: what ``[scheduler] stats_topic`` is when unset: ``<topic>-stats``
STATS_TOPIC_SUFFIX = "-stats"


def stats_topic(topic, configured=None):
    """The topic of stats casts for the scheduler topic ``topic``."""
    return configured or topic + STATS_TOPIC_SUFFIX
