"""Which bus ``gantt-demo`` plays on, and one line when it cannot.

A newcomer's first command must work on a machine with python3 alone,
and must never answer a broker problem with a traceback or a minute of
silence. So, before anything starts, the demo logs in to the broker the
way the RabbitMQ driver would (same host, port, user and virtual host;
one attempt, a few seconds at most):

* no ``--transport-url`` given, and nothing answers at the default URL
  (``rabbit://guest:guest@127.0.0.1:5672/``, or
  ``$GANTT_DEMO_DEFAULT_TRANSPORT_URL``): the demo runs on
  oslo.messaging's in-process ``fake:`` transport instead, and says so
  in one line;
* a broker that answers but refuses (bad credentials, a missing virtual
  host), or a broker named with ``--transport-url`` that fails in any
  way: :class:`BrokerError`, whose message is the one line to print
  (what failed, the URL without its password, how to fix it). A broker
  the user named is never replaced by the fake one behind their back.

``fake:`` named explicitly runs in-process too; a URL of another driver
is handed to oslo.messaging untried.
"""

import dataclasses
import re

import amqp
from oslo_config import cfg
import oslo_messaging as messaging

#: the broker a newcomer's machine has, if any
DEFAULT_URL = "rabbit://guest:guest@127.0.0.1:5672/"
#: names another default (tests point it at a closed port); unlike
#: --transport-url it still falls back when nothing answers there
DEFAULT_URL_ENV = "GANTT_DEMO_DEFAULT_TRANSPORT_URL"
#: oslo.messaging's in-memory driver: one process, one bus per transport
FAKE_URL = "fake:/"
#: seconds a broker has to answer the probe (a refusal is immediate)
PROBE_TIMEOUT = 3


class BrokerError(Exception):
    """The broker cannot be used; ``str()`` is the one line to print."""


class Unreachable(BrokerError):
    """Nothing answered: refused, no such host, or no answer in time."""


@dataclasses.dataclass(frozen=True)
class Bus:
    """The transport URL to play on, and what to tell the user first.

    ``embedded``: the daemon must run in the demo's own process (the
    fake driver's bus exists only in the process that made it).
    """

    url: str
    embedded: bool
    note: str | None = None


def choose(named_url, environ):
    """The bus for ``--transport-url`` ``named_url`` (None: not given).

    :raises: BrokerError when the broker cannot be used
    """
    if named_url is not None:
        return _named(named_url)
    url = environ.get(DEFAULT_URL_ENV) or DEFAULT_URL
    try:
        probe(url)
    except Unreachable:
        return Bus(FAKE_URL, True, note=(
            "no RabbitMQ answered at %s; running on oslo.messaging's "
            "in-process fake transport" % _where(url)))
    return Bus(url, False)


def _named(url):
    if _parse(url).transport == "fake":
        return Bus(url, True)
    probe(url)
    return Bus(url, False)


def probe(url):
    """Log in once to the RabbitMQ of ``url`` as its driver would; a URL
    of another driver is not tried.

    :raises: Unreachable, or BrokerError for a broker that refused
    """
    parsed = _parse(url)
    if parsed.transport not in ("rabbit", "amqp"):
        return
    host = (parsed.hosts or [messaging.TransportHost("")])[0]
    vhost = parsed.virtual_host or "/"
    try:
        conn = amqp.Connection(
            "%s:%d" % (_bracket(host.hostname or "localhost"),
                       host.port or 5672),
            userid=host.username or "guest",
            password=host.password or "guest", virtual_host=vhost,
            connect_timeout=PROBE_TIMEOUT)
        conn.connect()
        conn.close()
    except OSError as exc:
        raise Unreachable(_unreachable(url, exc)) from None
    except amqp.exceptions.AccessRefused:
        raise BrokerError(_refused(url)) from None
    except amqp.exceptions.NotAllowed as exc:
        raise BrokerError(_no_vhost(url, vhost, host, exc)) from None
    except amqp.exceptions.AMQPError as exc:
        raise BrokerError("gantt-demo: RabbitMQ at %s failed: %s; check "
                          "--transport-url" % (redact(url), exc)) from None


def _parse(url):
    """``url`` as oslo.messaging reads it (hosts, virtual host)."""
    try:
        return messaging.TransportURL.parse(cfg.ConfigOpts(), url)
    except messaging.InvalidTransportURL as exc:
        raise BrokerError("gantt-demo: transport URL %s: %s; write it as "
                          "rabbit://USER:PASSWORD@HOST:PORT/VHOST"
                          % (redact(url), exc)) from None


def _bracket(hostname):
    """An IPv6 address as ``host:port`` wants it."""
    return "[%s]" % hostname if ":" in hostname else hostname


def _unreachable(url, exc):
    why = exc.strerror or str(exc) or type(exc).__name__
    return ("gantt-demo: RabbitMQ is not reachable at %s (%s): %s; start it "
            "with: rabbitmq-server -detached, or leave out --transport-url "
            "to play on the in-process fake transport"
            % (_where(url), redact(url), why.lower()))


def _refused(url):
    return ("gantt-demo: RabbitMQ at %s refused the login (ACCESS_REFUSED): "
            "wrong user name or password; fix them in --transport-url, or "
            "add the user with: rabbitmqctl add_user USER PASSWORD"
            % redact(url))


def _no_vhost(url, vhost, host, exc):
    user = host.username or "guest"
    fix = ("rabbitmqctl set_permissions -p %s %s '.*' '.*' '.*'"
           % (vhost, user))
    if "not found" in str(exc):
        return ("gantt-demo: RabbitMQ at %s has no virtual host %r "
                "(NOT_ALLOWED); create it with: rabbitmqctl add_vhost %s && "
                "%s, or name another in --transport-url"
                % (redact(url), vhost, vhost, fix))
    return ("gantt-demo: RabbitMQ at %s does not let %s use the virtual "
            "host %r (NOT_ALLOWED); grant it with: %s"
            % (redact(url), user, vhost, fix))


def _where(url):
    """``host:port`` of the first broker of ``url``."""
    hosts = _parse(url).hosts
    host = hosts[0] if hosts else messaging.TransportHost("")
    return "%s:%d" % (host.hostname or "localhost", host.port or 5672)


def redact(url):
    """``url`` with every password replaced by ``***``."""
    return re.sub(r"([/,][^:/@,]*:)[^@/,]*@", r"\1***@", str(url))
