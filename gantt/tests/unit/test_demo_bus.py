"""gantt-demo's choice of bus without a broker: the fallback to the fake
transport only for the default URL, an error for a named one, and no
password in any line it prints (the broker's answers, bad credentials
and a missing virtual host, are in functional/test_demo.py)."""

import socket

import pytest

from gantt.cmd import demo_bus


@pytest.fixture
def closed_url():
    """A RabbitMQ URL on a loopback port that refuses connections."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield "rabbit://guest:secret@127.0.0.1:%d/" % sock.getsockname()[1]


def test_no_answer_at_the_default_url_means_the_fake_transport(closed_url):
    bus = demo_bus.choose(None, {demo_bus.DEFAULT_URL_ENV: closed_url})
    assert bus.embedded and bus.url == demo_bus.FAKE_URL
    assert "in-process fake transport" in bus.note


def test_a_named_broker_that_does_not_answer_is_an_error(closed_url):
    with pytest.raises(demo_bus.Unreachable) as caught:
        demo_bus.choose(closed_url, {})
    assert "rabbitmq-server -detached" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_fake_named_is_in_process_without_a_word():
    assert demo_bus.choose("fake:/", {}) == demo_bus.Bus("fake:/", True)


def test_an_unparsable_url_is_one_line():
    with pytest.raises(demo_bus.BrokerError, match="rabbit://USER:"):
        demo_bus.choose("no-scheme", {})


def test_every_password_is_redacted():
    assert demo_bus.redact("rabbit://a:pw1@h1:5672,b:pw2@h2:5672/v") == (
        "rabbit://a:***@h1:5672,b:***@h2:5672/v")
    assert demo_bus.redact("rabbit://h1:5672/") == "rabbit://h1:5672/"
