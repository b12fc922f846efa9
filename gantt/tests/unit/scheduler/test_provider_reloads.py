"""Re-reads of the standalone providers, one at a time.

A re-read forgets the providers its read lacks. When two overlapped (the
start-up load or the sync beside a report's own re-read), the older read
forgot the provider the newer one had just added; the next re-read took it
back on a new row, the old one left of no kind: a worker counted 8 hosts
for 7 providers ("0 of 8 hosts available" in test_services' rack test).
"""

import threading

from gantt.db import host_load
from gantt.objects import compute_node
from gantt.objects import provider
from gantt.tests import factories

BOUND = 60      # seconds: only against a hang; each wait is for a state


def _report(name):
    return provider.ProviderReport(
        provider=provider.ResourceProvider(
            uuid=factories.host_uuid(name), name=name, inventories=[
                compute_node.Inventory(resource_class="DISK_GB",
                                       total=100)]),
        report_sequence=1, kind="volume", service="svc")


class _Noting:
    """The re-read lock, noting when the reporter's thread waits on it."""

    def __init__(self, lock, reporter_waits):
        self.lock, self.reporter_waits = lock, reporter_waits

    def __enter__(self):
        if threading.current_thread().name == "reporter":
            self.reporter_waits.set()
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


def test_a_stale_re_read_forgets_no_provider_reported_meanwhile(
        scheduler, monkeypatch):
    stats = scheduler.stats
    stats.update_provider(_report("vol-1"))
    settled = threading.Event()       # the report done, or waiting its turn
    stats._providers_lock = _Noting(stats._providers_lock, settled)
    reporter = threading.Thread(
        target=lambda: (stats.update_provider(_report("vol-2")),
                        settled.set()), name="reporter")
    real_read = host_load.load_standalone_providers

    def stale_read(db):
        """This read, returned once vol-2 was reported after it."""
        if threading.current_thread().name == "reporter":
            return real_read(db)
        read = real_read(db)
        reporter.start()
        assert settled.wait(BOUND)
        return read

    monkeypatch.setattr(host_load, "load_standalone_providers", stale_read)
    stats.reload_providers()
    reporter.join(BOUND)
    monkeypatch.setattr(host_load, "load_standalone_providers", real_read)
    stats.reload_providers()
    cache = stats.cache
    assert {p.name for p in cache.standalone_providers()} == {"vol-1",
                                                             "vol-2"}
    assert cache.table.n == 2         # no row left behind of no kind
