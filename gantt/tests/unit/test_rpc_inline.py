"""gantt.rpc.Server: which messages its listener thread takes inline."""

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from gantt import rpc


class _Incoming:
    """What the AMQP driver hands a server (a cast has no orig_msg_id)."""

    def __init__(self, method="update_resource_stats", args=None,
                 version="1.0", orig_msg_id=None, **extra):
        self.message = dict(method=method, version=version, **extra)
        self.message["args"] = ({"compute_node": {"x": 1}} if args is None
                                else args)
        self.ctxt = {}
        self.orig_msg_id = orig_msg_id
        self.msg_id = orig_msg_id or "invented-by-the-base-class"
        self.acknowledged = False

    def acknowledge(self):
        self.acknowledged = True


class _Endpoint:
    target = messaging.Target(version="1.3")

    def update_resource_stats(self, ctxt, compute_node):
        raise AssertionError("not through the dispatcher")


class _Pool:
    def __init__(self):
        self.submitted = []

    def submit(self, fn, incoming):
        self.submitted.append(incoming[0])


@pytest.fixture
def server():
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    transport = rpc.get_transport(conf, url="fake:/")
    taken, batches = [], []

    def take(compute_node):
        if compute_node == "boom":
            raise RuntimeError("boom")
        taken.append(compute_node)

    srv = rpc.get_server(
        transport, messaging.Target(topic="t", server="s"), [_Endpoint()],
        inline={"update_resource_stats": take},
        after_batch=lambda: batches.append(len(taken)))
    srv._work_executor = _Pool()
    srv.taken, srv.batches = taken, batches
    yield srv
    transport.cleanup()


def test_casts_are_taken_inline_and_the_rest_goes_to_the_pool(server):
    cast = _Incoming()
    others = [
        _Incoming(orig_msg_id="abc"),                    # a call
        _Incoming(version="2.0"),                        # another major
        _Incoming(version="1.4"),                        # a newer minor
        _Incoming(version="1.x"),                        # no version
        _Incoming(method=["update_resource_stats"]),     # no method
        _Incoming(args={"compute_node": {}, "x": 1}),    # extra argument
        _Incoming(args={}),                              # missing one
        _Incoming(namespace="other"),
        _Incoming(method="get_statistics"),
    ]
    server._on_incoming([cast, *others, _Incoming(version="1.3")])
    assert server.taken == [{"x": 1}, {"x": 1}]
    assert cast.acknowledged
    assert server._work_executor.submitted == others
    assert server.batches == [2]


def test_a_failing_inline_callable_never_stops_the_listener(server, caplog):
    server._on_incoming([_Incoming(args={"compute_node": "boom"}),
                         _Incoming()])
    assert server.taken == [{"x": 1}]
    assert "Failed to take an inline update_resource_stats cast" in caplog.text


def test_a_message_of_another_driver_is_never_taken_inline(server):
    incoming = _Incoming()
    del incoming.orig_msg_id
    server._on_incoming([incoming])
    assert server.taken == []
    assert server._work_executor.submitted == [incoming]


@pytest.fixture
def skipping_server():
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    transport = rpc.get_transport(conf, url="fake:/")
    srv = rpc.get_server(
        transport, messaging.Target(topic="t", server="s"), [_Endpoint()],
        skip={"update_resource_stats": lambda ctxt: ctxt.get("from") == "me"})
    srv._work_executor = _Pool()
    yield srv
    transport.cleanup()


def _with_context(incoming, ctxt):
    incoming.ctxt = ctxt
    return incoming


def test_a_cast_the_predicate_accepts_is_dropped_unread(skipping_server):
    own = _with_context(_Incoming(), {"from": "me"})
    others = [
        _with_context(_Incoming(), {"from": "a peer"}),
        _with_context(_Incoming(), {}),
        # a call always gets its answer, whoever sent it
        _with_context(_Incoming(orig_msg_id="abc"), {"from": "me"}),
        _with_context(_Incoming(method="get_statistics"), {"from": "me"}),
        _with_context(_Incoming(), "not a dict"),
    ]
    skipping_server._on_incoming([own, *others])
    assert own.acknowledged
    assert skipping_server._work_executor.submitted == others


def test_the_dispatcher_checks_arguments_with_one_signature_per_method():
    class Endpoint:
        target = messaging.Target(version="1.0")

        def ping(self, ctxt, value):
            return value

    def call(args):
        incoming = _Incoming("ping", args=args, orig_msg_id="abc")
        incoming.client_timeout = None
        return dispatcher.dispatch(incoming)

    dispatcher = rpc.Dispatcher([Endpoint()], rpc.Serializer())
    assert call({"value": 3}) == 3
    assert call({"value": 4}) == 4
    assert list(dispatcher._signatures) == [(Endpoint, "ping")]
    with pytest.raises(messaging.ExpectedException):
        call({"other": 1})
