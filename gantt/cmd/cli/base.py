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
import logging
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

#: oslo.messaging's drivers log here when they cannot reach a broker
#: (they log through oslo.log, which names loggers "oslo.messaging…")
_DRIVERS_LOGGER = "oslo.messaging._drivers"
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


class _BrokerWatch(logging.Handler):
    """Counts the connection failures oslo.messaging's drivers log.

    oslo.messaging retries a broker connection forever for a call's reply
    queue (``retry=`` bounds only the sending), and says so only by logging
    an ERROR per attempt from its driver's logger: this handler, on that
    logger, is how the CLI learns the broker is unreachable. ``failed``
    is set once every broker host of the transport_url has failed once
    (kombu moves on to the next host of a cluster after a failure).
    """

    def __init__(self, hosts, wake):
        super().__init__(logging.ERROR)
        self.hosts = max(hosts, 1)
        self.failures = []
        self.wake = wake

    def emit(self, record):
        self.failures.append(_reason(record))
        if len(self.failures) >= self.hosts:
            self.wake.set()

    @property
    def failed(self):
        return len(self.failures) >= self.hosts


def _reason(record):
    """The error of a driver's log record, without its retry advice."""
    args = record.args
    if isinstance(args, dict) and "err_str" in args:
        return str(args["err_str"])
    if isinstance(args, tuple) and args:
        return str(args[0])
    return record.getMessage()


class Rpc:
    """RPC calls to the scheduler that end within ``timeout`` seconds.

    Each call runs on a daemon thread; the command waits for its answer,
    for the broker to be found unreachable, or for ``timeout``, whichever
    comes first, and an unanswered call is left behind when the process
    exits.
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
        self._hosts = len(url.hosts)

    def can_send_version(self, version):
        return self.client.can_send_version(version)

    def call(self, method, *args, **kwargs):
        """``SchedulerClient.<method>(None, *args, **kwargs)``.

        :raises: CommandError for every failure
        """
        wake = threading.Event()
        outcome = {}
        watch = _BrokerWatch(self._hosts, wake)
        logger = logging.getLogger(_DRIVERS_LOGGER)
        logger.addHandler(watch)
        thread = threading.Thread(
            target=self._run, args=(wake, outcome, method, args, kwargs),
            name="gantt-rpc", daemon=True)
        try:
            thread.start()
            # a second more than the call's own timeout: its
            # MessagingTimeout is the usual way a call ends unanswered
            wake.wait(self.timeout + 1)
        finally:
            logger.removeHandler(watch)
        if "error" in outcome:
            raise _command_error(outcome["error"], self) from None
        if "value" in outcome:
            return outcome["value"]
        self.broken = True
        if watch.failed:
            raise CommandError(str(exception.MessagingUnavailable(
                url=self.brokers, reason=watch.failures[-1])))
        raise _no_answer(self)

    def _run(self, wake, outcome, method, args, kwargs):
        try:
            outcome["value"] = getattr(self.client, method)(None, *args,
                                                            **kwargs)
        except Exception as exc:
            outcome["error"] = exc
        finally:
            wake.set()

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
