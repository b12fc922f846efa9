"""Scheduling profiles in a real daemon over RabbitMQ, once with MariaDB
and once with PostgreSQL.

One daemon, three profiles: ``default`` spreads (Nova's weighers,
``packing`` empty), ``packed`` stacks (``packing = stack``), ``open``
spreads but lets a request choose its packing policy. Two empty hosts,
``big`` (4 times the room) and ``small``: spreading picks ``big``,
stacking the fuller ``small``.
"""

import pytest

from gantt import exception
from gantt.tests import factories as f

PROFILES = ("profiles = packed,open\n"
            "[filter_scheduler]\npacking =\n"
            "[profile:packed]\npacking = stack\n"
            "[profile:open]\nrequest_packing = true\n")


@pytest.fixture
def two_hosts(server_db, daemon_factory):
    daemon = daemon_factory(server_db.url, extra=PROFILES)
    for name, size in (("small", 1), ("big", 4)):
        daemon.client.update_resource_stats(None, f.compute_node_obj(
            name, vcpus=4 * size, memory_mb=4096 * size, disk_gb=100 * size))
    daemon.wait_for_hosts(2)
    return daemon


def _request(**fields):
    return f.request(f.flavor("m1", vcpus=1, memory_mb=512, root_gb=1),
                     **fields)


def _place(daemon, **fields):
    [sels] = daemon.client.select_destinations(None, _request(**fields),
                                               f.uuids(1))
    assert sels[0].claimed
    return sels[0].service_host


def _usage(daemon):
    return {s.host: {r.resource_class: r.used for r in s.resources}
            for s in daemon.client.get_host_states(None)}


def test_the_same_request_is_placed_by_the_profile_it_names(two_hosts):
    assert _place(two_hosts) == "big"
    assert _place(two_hosts, profile="packed") == "small"
    assert _place(two_hosts, profile="default") == "big"
    explained = two_hosts.client.explain(None, _request(profile="packed"))
    assert (explained.profile, explained.packing) == ("packed", "stack")
    assert explained.weighed[0].host == "small"


def test_an_unknown_profile_is_a_typed_refusal_that_changes_nothing(
        two_hosts):
    before = _usage(two_hosts)
    with pytest.raises(exception.UnknownProfile) as raised:
        _place(two_hosts, profile="volume")
    assert isinstance(raised.value, exception.InvalidRequest)
    assert "Unknown scheduling profile volume; this scheduler has: " \
           "default, packed, open" in str(raised.value)
    assert _usage(two_hosts) == before


def test_a_requests_packing_is_honoured_only_where_allowed(two_hosts):
    assert _place(two_hosts, profile="open") == "big"
    assert _place(two_hosts, profile="open", packing="stack") == "small"
    before = _usage(two_hosts)
    for profile in (None, "packed"):
        with pytest.raises(exception.PackingRefused,
                           match="does not let requests choose"):
            _place(two_hosts, profile=profile, packing="spread")
    with pytest.raises(exception.PackingRefused, match="no such policy"):
        _place(two_hosts, profile="open", packing="tetris")
    assert _usage(two_hosts) == before
