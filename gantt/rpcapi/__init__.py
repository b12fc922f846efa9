"""The RPC boundary: client for callers, thin endpoint for the server."""

#: RPC API version of this code; see the history in client.SchedulerClient
RPC_API_VERSION = "1.0"

#: AMQP exchange of every Gantt topic, set on each Target so that callers do
#: not depend on their own ``control_exchange`` option
EXCHANGE = "gantt"
