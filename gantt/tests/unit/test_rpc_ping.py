"""``[DEFAULT] rpc_ping_enabled``, read from Gantt's own ConfigOpts.

oslo.messaging reads the option from the global ``cfg.CONF``; gantt.rpc
reads it from the conf the transport was built with (Gantt never parses the
global one). On oslo.messaging's fake driver, in process; the functional
test pings the real daemon over RabbitMQ.
"""

from oslo_config import cfg
import oslo_messaging as messaging
import pytest

from gantt import exception
from gantt import rpc


class _Endpoint:
    target = messaging.Target(version="1.0")

    def echo(self, ctxt, value):
        return value


def _serve_and_call(ping_enabled, method, **args):
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    rpc.register_opts(conf)
    conf.set_override("rpc_ping_enabled", ping_enabled)
    transport = rpc.get_transport(conf, url="fake:/")
    target = messaging.Target(topic="ping-test", server="s")
    server = rpc.get_server(transport, target, [_Endpoint()])
    server.start()
    try:
        client = rpc.get_client(transport, messaging.Target(
            topic="ping-test", version="1.0"), timeout=5)
        return client.call({}, method, **args)
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


def test_a_server_answers_ping_when_the_option_is_on():
    assert _serve_and_call(True, "oslo_rpc_server_ping") == "pong"
    # the global option (registered by oslo.messaging's dispatcher) is off
    assert not cfg.CONF.rpc_ping_enabled
    # the other methods are served as before
    assert _serve_and_call(True, "echo", value=3) == 3


def test_ping_is_an_unknown_method_when_the_option_is_off():
    with pytest.raises(exception.InvalidRequest,
                       match="oslo_rpc_server_ping"):
        _serve_and_call(False, "oslo_rpc_server_ping")


def test_the_option_is_part_of_gantts_configuration():
    # registered with the other oslo.messaging options Gantt needs, so the
    # sample config, the daemon's preflight and gantt-status all know it
    conf = cfg.ConfigOpts()
    rpc.register_opts(conf)
    conf([], default_config_files=[])
    assert conf.rpc_ping_enabled is False
