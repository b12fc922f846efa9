"""What every ``gantt`` sub-command shares: its configuration, its RPC
calls with a bounded wait, its errors and its output columns.

Errors: a command raises :class:`CommandError`; the command prints it as
one line on stderr (``gantt: <message>``) and exits with its code:

* 1 – the operation failed (no such host or aggregate, no broker, no
  scheduler answering in time);
* 2 – the input was refused (a bad option value, a bad spec file, a host
  the scheduler does not know, a call the configured version cap forbids).
"""

import argparse
import socket
import threading

from cliff import columns
from oslo_config import cfg
import oslo_messaging as messaging

from gantt import exception
from gantt import rpc
from gantt.cmd import common
from gantt.rpcapi import client as rpc_client

FAILED = 1
REFUSED = 2

#: seconds a broker host has to accept a TCP connection before the
#: first call (a broker that is up accepts at once)
_PROBE_S = 2.0
#: libraries whose log lines the command says in its own words: those of
#: oslo.messaging (stdlib- and oslo.log-named) and of stevedore (which
#: loads its driver)
QUIET_LOGGERS = ("oslo.messaging", "oslo_messaging", "stevedore")


class CommandError(Exception):
    """One line for the operator and the exit code that goes with it."""

    def __init__(self, message, code=FAILED):
        super().__init__(message)
        self.code = code


class Command:
    """Mixin for every command: a CommandError becomes its line and code.

    Put it first among a command's bases (before cliff's class).
    """

    def run(self, parsed_args):
        try:
            return super().run(parsed_args)
        except CommandError as exc:
            self.app.stderr.write("gantt: %s\n" % exc)
            return exc.code

    @property
    def rpc(self):
        return self.app.rpc


def load_conf(config_files, config_dirs):
    """The options of ``--config-file`` and ``--config-dir`` (or of
    oslo.config's default files when neither is given)."""
    args = []
    for path in config_files or ():
        args += ["--config-file", path]
    for path in config_dirs or ():
        args += ["--config-dir", path]
    try:
        return common.parse_args(args, log=False)
    except cfg.Error as exc:
        raise CommandError(str(exc), REFUSED) from None


def positive_seconds(text):
    """argparse type of ``--timeout``."""
    try:
        value = float(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError("%r is not a positive number of "
                                         "seconds" % text)
    return value


class Rpc:
    """RPC calls to the scheduler that end within ``timeout`` seconds.

    SchedulerClient ends a call within its timeout, the broker down
    included (``MessageDeliveryFailure``, said as "Cannot reach the
    message broker"). As a last guard each call runs on a daemon thread
    that the command waits for a second longer, and an unanswered call is
    left behind when the process exits.
    """

    def __init__(self, conf, timeout):
        self.conf = conf
        self.timeout = timeout
        self.broken = False
        try:
            self._transport = rpc.get_transport(conf)
        except (messaging.InvalidTransportURL, messaging.DriverLoadFailure,
                ValueError) as exc:
            raise CommandError("[DEFAULT] transport_url: %s" % (exc,),
                               REFUSED) from None
        self.client = rpc_client.SchedulerClient.from_conf(
            conf, transport=self._transport, timeout=timeout)
        url = messaging.TransportURL.parse(conf, conf.transport_url)
        self.brokers = ", ".join("%s:%s" % (h.hostname, h.port)
                                 for h in url.hosts) or "localhost"
        self._addresses = [(h.hostname, h.port) for h in url.hosts
                           if h.hostname and h.port]
        self._probed = False

    def can_send_version(self, version):
        return self.client.can_send_version(version)

    def call(self, method, *args, **kwargs):
        """``SchedulerClient.<method>(None, *args, **kwargs)``.

        :raises: CommandError for every failure
        """
        self._check_brokers()
        done = threading.Event()
        outcome = {}
        thread = threading.Thread(
            target=self._run, args=(done, outcome, method, args, kwargs),
            name="gantt-rpc", daemon=True)
        thread.start()
        # a second more than the call's own timeout, which bounds it
        # (a broker that is down included): its MessagingTimeout is the
        # usual way a call ends unanswered
        done.wait(self.timeout + 1)
        if "error" in outcome:
            raise _command_error(outcome["error"], self) from None
        if "value" in outcome:
            return outcome["value"]
        self.broken = True
        raise _no_answer(self)

    def _check_brokers(self):
        """Before the first call: say at once that no broker listens
        (nothing accepts a TCP connection on any host of the
        transport_url), rather than after the part of the timeout the
        client gives its connection.

        :raises: CommandError
        """
        if self._probed or not self._addresses:
            return
        self._probed = True
        error = None
        for address in self._addresses:
            try:
                socket.create_connection(address, timeout=_PROBE_S).close()
                return
            except OSError as exc:
                error = exc
        self.broken = True
        raise CommandError(str(exception.MessagingUnavailable(
            url=self.brokers, reason=error)))

    def _run(self, done, outcome, method, args, kwargs):
        try:
            outcome["value"] = getattr(self.client, method)(None, *args,
                                                            **kwargs)
        except Exception as exc:
            outcome["error"] = exc
        finally:
            done.set()

    def close(self):
        # a transport whose call hangs in a reconnect loop would wait for
        # it: left to the process exit
        if not self.broken:
            self._transport.cleanup()


def _no_answer(rpc_):
    return CommandError(
        "no gantt-scheduler answered on topic %s within %g s (is one "
        "running, on the broker at %s?)"
        % (rpc_.conf.scheduler.topic, rpc_.timeout, rpc_.brokers))


def _command_error(error, rpc_):
    if isinstance(error, messaging.MessagingTimeout):
        rpc_.broken = True
        return _no_answer(rpc_)
    # .message: without the remote traceback oslo.messaging appends to
    # the str() of an exception it rebuilt
    if isinstance(error, (exception.InvalidRequest, exception.VersionCapped,
                          exception.ConfigurationError)):
        return CommandError(error.message, REFUSED)
    if isinstance(error, exception.GanttException):
        return CommandError(error.message)
    if isinstance(error, messaging.RemoteError):
        return CommandError("the scheduler failed: %s: %s"
                            % (error.exc_type, error.value))
    if isinstance(error, messaging.MessageDeliveryFailure):
        # the broker could not be reached within the call's timeout
        rpc_.broken = True
        return CommandError(str(exception.MessagingUnavailable(
            url=rpc_.brokers, reason=error)))
    if isinstance(error, messaging.MessagingException):
        return CommandError("messaging failed: %s" % (error,))
    return error


# -- output columns -------------------------------------------------------


class ListColumn(columns.FormattableColumn):
    """A list: comma-separated in a table, a list in JSON and YAML."""

    def human_readable(self):
        return ", ".join(str(v) for v in self._value)

    def machine_readable(self):
        return list(self._value)


class DictColumn(columns.FormattableColumn):
    """A mapping: ``key=value, …`` in a table, a mapping in JSON and
    YAML."""

    def human_readable(self):
        return ", ".join("%s=%s" % kv for kv in sorted(self._value.items()))

    def machine_readable(self):
        return dict(self._value)


def plain(value):
    """An object's field as a cliff column value."""
    if isinstance(value, dict):
        return DictColumn(value)
    if isinstance(value, (list, tuple)):
        return ListColumn(value)
    return value


def properties(items, option="--property"):
    """``{key: value}`` from ``KEY=VALUE`` strings.

    :raises: CommandError (REFUSED) naming the bad item
    """
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError("%s takes KEY=VALUE, got %r" % (option, item),
                               REFUSED)
        out[key] = value
    return out
