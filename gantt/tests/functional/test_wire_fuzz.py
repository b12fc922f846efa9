"""A hostile or buggy client against a real 2-worker daemon.

Hypothesis builds messages for every RPC method and every object on the
wire, each broken in one way (a field of the wrong type, out of range, not
Unicode, null, unknown; an unknown or missing argument; an unknown method;
an RPC or object version the worker does not serve; a bad context; a
message over ``[wire] max_message_bytes``), and sends them as raw JSON
through an oslo.messaging client with no Gantt serializer, as such a
client would, mixed with valid read-only traffic. Then:

* no worker died, and every call was answered;
* every bad call got ``InvalidRequest`` (a Gantt exception, never an
  internal class) with no traceback of the worker's, every valid one its
  answer;
* no database row and no cached host changed;
* every bad message was counted in ``messages_rejected`` (a fanout cast
  once by each worker);
* the log holds a bounded number of refusal lines and no traceback.

One database backend (MariaDB): nothing here is specific to one. The
examples are derandomized, so a run is repeatable.

Over 400 lines: a valid base call of every RPC method, the ways to break
one, the raw sender and the before/after checks all serve the one story
below, and stay next to it.
"""

import copy
import inspect
import uuid

import hypothesis
from hypothesis import strategies as st
import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from gantt import exception
from gantt import rpcapi
from gantt.objects import aggregate as aggregate_obj
from gantt.objects import compute_node as compute_node_obj
from gantt.objects import group as group_obj
from gantt.objects import provider as provider_obj
from gantt.objects import request_spec as request_spec_obj
from gantt.objects import selection as selection_obj
from gantt.objects import usage as usage_obj
from gantt.rpcapi import server as rpc_server
from gantt.rpcapi.validate import rpc_version_is_valid
from gantt.tests import factories
from gantt.tests.functional import conftest
from gantt.tests.functional import waiting

DATA = "gantt_object.data"
MAX_BYTES = 65536
BURST = 5
HOSTS = ["fuzz-%d" % i for i in (1, 2, 3)]
EXAMPLES = 300
#: the first RPC API version the workers do not serve yet
_NEXT_MINOR = "1.%d" % (int(rpcapi.RPC_API_VERSION.split(".")[1]) + 1)


@pytest.fixture
def server_db():
    """MariaDB only (overrides the conftest's two backends)."""
    fx = conftest._database("mysql")
    yield fx
    fx.cleanUp()


def _selection(host, consumer):
    node = factories.host_uuid(host)
    request = selection_obj.AllocationRequest(allocations=[
        selection_obj.AllocationItem(resource_provider_uuid=node,
                                     resources={"VCPU": 1})])
    return selection_obj.Selection(
        service_host=host, nodename=host, compute_node_uuid=node,
        allocation_request=request, consumer_uuid=consumer, claimed=True)


def _bases():
    """``{method: (kind, version, args)}``: each method with arguments that
    are valid, and would change state if they were taken: a new host, a
    claim on a known one, a new aggregate…"""
    p = factories.primitive
    node = p(factories.full_compute_node_obj("fuzz-new"))
    spec = p(factories.request(flavor_obj=factories.flavor(root_gb=1)))
    consumer, migration = factories.uuids(2)
    selection = p(_selection(HOSTS[0], consumer))
    usage = p(usage_obj.ProviderUsage(
        resource_provider_uuid=factories.host_uuid(HOSTS[0]),
        generation=99, usages={"VCPU": 5}))
    group = p(group_obj.GroupRequest(
        group_uuid=str(uuid.uuid4()), project_id="p",
        policies=[request_spec_obj.GroupLevelPolicy(level="host",
                                                    rule="anti-affinity")],
        members=[group_obj.GroupMember(
            name="m", count=2, request_spec=factories.request(
                flavor_obj=factories.flavor(root_gb=1)))]))
    pool = provider_obj.ResourceProvider(
        uuid=str(uuid.uuid4()), name="pool", inventories=[
            compute_node_obj.Inventory(resource_class="DISK_GB", total=9)])
    return {
        "update_resource_stats": ("cast", "1.0", {"compute_node": node}),
        "report_resource_stats": ("call", "1.3", {"compute_node": node,
                                                  "force": False}),
        "select_destinations": ("call", "1.0", {
            "request_spec": spec, "instance_uuids": [consumer],
            "return_alternates": True}),
        "reclaim": ("call", "1.0", {"instance_uuid": consumer,
                                    "failed_selection": selection,
                                    "alternates": [selection]}),
        "release": ("call", "1.0", {"consumer_uuid": consumer}),
        "get_host_states": ("call", "1.0", {"hosts": [HOSTS[0]]}),
        "get_statistics": ("call", "1.0", {}),
        "provider_usage_changed": ("cast", "1.0", {"usages": [usage]}),
        "explain": ("call", "1.2", {"request_spec": spec, "limit": 5}),
        "set_aggregate": ("call", "1.2", {"aggregate": p(
            aggregate_obj.Aggregate(uuid=str(uuid.uuid4()), name="agg",
                                    hosts=[HOSTS[0]]))}),
        "delete_aggregate": ("call", "1.2", {"aggregate_uuid": consumer}),
        "get_aggregates": ("call", "1.2", {}),
        "aggregates_changed": ("cast", "1.2", {}),
        "update_provider": ("call", "1.3", {"report": p(
            provider_obj.ProviderReport(provider=pool,
                                        report_sequence=1))}),
        "delete_provider": ("call", "1.3", {"provider_uuid": consumer}),
        "providers_changed": ("cast", "1.3", {}),
        "trees_changed": ("cast", "1.13", {"root_uuids": [consumer]}),
        "retire_provider": ("call", "1.9", {"provider_uuid": consumer,
                                            "generation": 0}),
        "get_allocation_candidates": ("call", "1.3", {
            "request_spec": spec, "limit": 10}),
        "claim_allocations": ("call", "1.3", {
            "consumer_uuid": consumer,
            "allocation_request": selection[DATA]["allocation_request"],
            "project_id": "p", "user_id": "u"}),
        "move_claim": ("call", "1.3", {
            "request_spec": spec, "instance_uuid": consumer,
            "migration_uuid": migration, "return_alternates": True}),
        "confirm_move": ("call", "1.3", {"migration_uuid": migration}),
        "revert_move": ("call", "1.3", {"instance_uuid": consumer,
                                        "migration_uuid": migration}),
        "reserve_group": ("call", "1.12", {"group_request": group}),
        "extend_group": ("call", "1.12", {"group_request": group}),
        "plan_group": ("call", "1.12", {"group_request": group}),
        "release_group": ("call", "1.12", {"group_uuid": consumer}),
    }


BASES = _bases()


def _required(method):
    params = inspect.signature(
        getattr(rpc_server.SchedulerEndpoint, method)).parameters
    return [n for n, p in list(params.items())[2:]
            if p.default is inspect.Parameter.empty]


# -- breaking a message: each way gives a value no field accepts -----------

#: values of another JSON type than the one replaced, none valid there
WRONG = {
    int: [True, 3.7, "3", [], {}, 2 ** 63, -2 ** 64, float("nan")],
    float: [True, "1.5", float("nan"), float("inf"), [], {}],
    str: [12, True, 1.5, [], {}, "\ud800", "host\udcff"],
    bool: [0, 1, "true", [], {}],
    list: ["x", 5, {}, True],
    dict: ["x", 5, [], True],
}
#: appended to a list or added to a dict: no list or dict holds it
BOGUS = {"bogus": []}


def _leaves(value, path=()):
    """Every place in ``value`` a breaking change can go."""
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        yield path
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))
    elif value is not None:
        yield path


def _get(value, path):
    for key in path:
        value = value[key]
    return value


@st.composite
def _broken_args(draw, args):
    """``args`` with one value broken."""
    args = copy.deepcopy(args)
    path = draw(st.sampled_from([p for p in _leaves(args) if p]))
    parent, key = _get(args, path[:-1]), path[-1]
    value = parent[key]
    if isinstance(value, dict) and "gantt_object.name" in value:
        change = draw(st.sampled_from(["field", "version", "name"]))
        if change == "field":
            value[DATA]["bogus_field"] = 1
        elif change == "version":
            value["gantt_object.version"] = draw(st.sampled_from(
                ["1.99", "2.0", "x", 1.0]))
        else:
            value["gantt_object.name"] = "Flavour"
    elif isinstance(value, (list, dict)) and draw(st.booleans()):
        if isinstance(value, list):
            value.append(BOGUS)
        else:
            value["bogus"] = BOGUS
    else:
        parent[key] = draw(st.sampled_from(WRONG[type(value)]))
    return args


@st.composite
def bad_messages(draw):
    """``(method, kind, version, args, ctxt)``, broken in one way."""
    method = draw(st.sampled_from(sorted(BASES)))
    kind, version, args = BASES[method]
    ctxt = {"request_id": "req-fuzz"}
    how = draw(st.sampled_from(["value", "value", "value", "unknown",
                                "missing", "version", "method", "context",
                                "size"]))
    if how == "value" and args:
        args = draw(_broken_args(args))
    elif how == "missing" and _required(method):
        args = dict(args)
        del args[draw(st.sampled_from(_required(method)))]
    elif how == "version":
        version = draw(st.sampled_from(["2.0", _NEXT_MINOR, "0.9", "1.x",
                                        "1", ""]))
    elif how == "method":
        method = draw(st.sampled_from(["no_such_method", "target",
                                       "scheduler", "_wait_ready", "",
                                       "x" * 300]))
    elif how == "context":
        ctxt = draw(st.sampled_from([{"roles": "admin"},
                                     {"is_admin": "yes"},
                                     {"request_id": ["r"]}]))
    elif how == "size":
        # valid but for its size: unknown context keys are ignored
        ctxt = {"padding": "x" * MAX_BYTES}
    else:
        args = dict(args, surplus=draw(st.sampled_from([1, None, "x"])))
    return method, kind, version, args, ctxt


# -- the daemon's state ----------------------------------------------------


def _rows(db):
    """Every row of every table, in a stable order."""
    tables = {}
    with db.engine.connect() as conn:
        for name in sorted(sa.inspect(conn).get_table_names()):
            rows = conn.execute(sa.text("SELECT * FROM %s" % name))
            tables[name] = sorted(map(repr, rows))
    return tables


class _Raw:
    """A client that sends what it is given, as JSON, no objects."""

    def __init__(self, daemon):
        self.target = messaging.Target(exchange=rpcapi.EXCHANGE,
                                       topic=daemon.topic, version="1.0")
        self.calls = messaging.get_rpc_client(daemon.transport, self.target,
                                              timeout=waiting.CALL)
        self.stats = rpcapi.stats_topic(daemon.topic, None)
        self.transport = daemon.transport

    def send(self, method, kind, version, args, ctxt, stats_topic=False):
        if not rpc_version_is_valid(version):
            return self._unchecked(method, kind, version, args, ctxt,
                                   stats_topic)
        if kind == "call":
            return self.calls.prepare(version=version).call(
                ctxt, method, **args)
        extra = {"topic": self.stats} if stats_topic else {}
        self.calls.prepare(version=version, fanout=True,
                           **extra).cast(ctxt, method, **args)
        return None

    def _unchecked(self, method, kind, version, args, ctxt, stats_topic):
        """Send with a version oslo.messaging's client refuses to send.

        NOTE: through the transport's private ``_send`` (the client's
        ``prepare`` checks the version): a client not built on
        oslo.messaging sends what it likes.
        """
        message = {"method": method, "args": args, "version": version}
        if kind == "call":
            return self.transport._send(self.target, ctxt, message,
                                        wait_for_reply=True,
                                        timeout=waiting.CALL)
        target = self.target(fanout=True, topic=(
            self.stats if stats_topic else self.target.topic))
        self.transport._send(target, ctxt, message)
        return None

    def statistics(self):
        """``{worker: statistics data}`` of both workers."""
        seen = {}

        def both():
            data = self.calls.call({}, "get_statistics")[DATA]
            seen[data["worker"]] = data
            return len(seen) == 2
        waiting.until("answers of both workers", both, interval=0)
        return seen

    def host_states(self):
        """The caches of the two workers (they may differ: a host's
        generation is unknown to a worker until it claims there), as
        ``{(host, field): value}`` each; several calls, so both answer."""
        caches = []
        for _ in range(8):
            flat = _flat(self.calls.call({}, "get_host_states"))
            if flat not in caches:
                caches.append(flat)
        return caches


def _flat(states):
    flat = {}
    for state in states:
        data = dict(state[DATA])
        for usage in data.pop("resources"):
            for key, value in usage[DATA].items():
                flat[data["host"], usage[DATA]["resource_class"], key] = value
        flat.update(((data["host"], key), value)
                    for key, value in data.items())
    return flat


def _unchanged(before, after):
    """Each cache after is one of before, with what differs if not."""
    for cache in after:
        assert cache in before, [
            {key: (old.get(key), cache.get(key))
             for key in old.keys() | cache.keys()
             if old.get(key) != cache.get(key)} for old in before]


def _rejected(raw):
    return sum(s["messages_rejected"] for s in raw.statistics().values())


def _wait_rejected(raw, expected):
    """The messages both workers rejected, once at least ``expected``."""
    [count] = waiting.until(
        "%d messages rejected" % expected,
        lambda: [c for c in [_rejected(raw)] if c >= expected])
    return count


def _wait_for_hosts(raw):
    """Until both workers, each by its own statistics, hold every host
    (the reports reach the second one as casts)."""
    waiting.until("both workers holding %d hosts" % len(HOSTS), lambda: all(
        s["hosts"] == len(HOSTS) for s in raw.statistics().values()))


def _valid_traffic(raw, daemon, i, last):
    """Read-only calls that must keep working, and reports the workers
    already hold (stale: they change nothing)."""
    hosts = {s[DATA]["host"] for s in raw.calls.call({}, "get_host_states")}
    assert hosts == set(HOSTS), "after %s" % (repr(last)[:300],)
    if i % 3 == 0:
        daemon.client.update_resource_stats(None, NODES[i % len(NODES)])
    if i % 5 == 0:
        raw.calls.prepare(version="1.2").call(
            {}, "explain", request_spec=BASES["explain"][2]["request_spec"],
            limit=3)


NODES = [factories.compute_node_obj(h) for h in HOSTS]


def test_bad_messages_are_refused_counted_and_change_nothing(
        daemon_factory, server_db):
    daemon = daemon_factory(
        server_db.url, workers=2,
        extra="service_down_time = 600\nusage_sync_interval = 0\n"
              "[wire]\nmax_message_bytes = %d\nrejection_log_burst = %d\n"
              % (MAX_BYTES, BURST))
    for node in NODES:
        daemon.client.report_resource_stats(None, node)
    raw = _Raw(daemon)
    _wait_for_hosts(raw)
    rows, states = _rows(server_db.db), raw.host_states()
    rejected = _rejected(raw)
    sent = {"bad": 0}

    @hypothesis.settings(max_examples=EXAMPLES, derandomize=True,
                         deadline=None, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(bad_messages(), st.booleans())
    def send_bad(message, stats_topic):
        method, kind, version, args, ctxt = message
        sent["bad"] += 2 if kind == "cast" else 1
        if kind == "call":
            with pytest.raises(exception.InvalidRequest) as error:
                raw.send(*message)
            # the type and the reason; never the worker's code
            assert "Traceback" not in str(error.value)
        else:
            raw.send(*message, stats_topic=stats_topic
                     and method == "update_resource_stats")
        _valid_traffic(raw, daemon, sent["bad"], message)

    send_bad()
    assert _wait_rejected(raw, rejected + sent["bad"]) == (
        rejected + sent["bad"])
    assert daemon.proc.poll() is None
    assert _rows(server_db.db) == rows
    _unchanged(states, raw.host_states())
    log = daemon.log()
    # per worker: BURST lines, then one summary line per interval
    assert log.count("Rejected ") <= 2 * BURST, log[-3000:]
    assert "x" * 1000 not in log
