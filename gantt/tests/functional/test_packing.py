"""A packing policy in a real daemon: BalancedAllocationWeigher over
RabbitMQ, once with MariaDB and once with PostgreSQL.

The daemon spreads (RAM, CPU and disk weighers at +1, Nova's defaults)
and weighs balance at 5, comparing VCPU and MEMORY_MB: a RAM-heavy flavor
goes to the host whose CPUs are used, not to the emptiest host, and a
CPU-heavy one to the host whose RAM is used.
"""

from gantt.tests import factories as f

BALANCED = ("[filter_scheduler]\n"
            "enabled_weighers = RAMWeigher,CPUWeigher,DiskWeigher,"
            "BalancedAllocationWeigher\n"
            "balanced_allocation_weight_multiplier = 5.0\n"
            "balanced_allocation_resource_classes = VCPU,MEMORY_MB\n")
HOSTS = ("empty", "cpu-used", "ram-used")


def _place(daemon, flavor, **fields):
    [sels] = daemon.client.select_destinations(
        None, f.request(flavor, **fields), f.uuids(1))
    assert sels[0].claimed
    return sels[0].service_host


def test_balanced_weigher_evens_out_the_classes(server_db, daemon_factory):
    daemon = daemon_factory(server_db.url, extra=BALANCED)
    for name in HOSTS:
        daemon.client.update_resource_stats(None, f.compute_node_obj(
            name, vcpus=16, memory_mb=65536, disk_gb=1000))
    daemon.wait_for_hosts(len(HOSTS))
    # boot from volume (no disk): 8 of 16 VCPUs used, then 3/8 of the RAM
    assert _place(daemon, f.flavor("cpu", vcpus=8, memory_mb=2048,
                                   root_gb=0),
                  force_hosts=["cpu-used"]) == "cpu-used"
    assert _place(daemon, f.flavor("ram", vcpus=1, memory_mb=24576,
                                   root_gb=0),
                  force_hosts=["ram-used"]) == "ram-used"

    # RAM-heavy: cpu-used ends at (9/16, 34/64) of (VCPU, RAM), balanced;
    # the empty host at (1/16, 32/64) would not be, though it is the
    # roomiest (the spreading weighers alone pick it)
    ram_heavy = f.flavor("r1", vcpus=1, memory_mb=32768, root_gb=0)
    assert _place(daemon, ram_heavy) == "cpu-used"
    # CPU-heavy: ram-used ends at (7/16, 25/64)
    cpu_heavy = f.flavor("c1", vcpus=6, memory_mb=1024, root_gb=0)
    assert _place(daemon, cpu_heavy) == "ram-used"
