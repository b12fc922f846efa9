"""The Gantt side's toolbox: config, cache, database and daemon.

Imported in the Gantt venv only. It turns the plain cloud of
:mod:`fleet` into what Gantt reads: host reports for the in-memory cache,
rows of Gantt's schema (bulk SQL, as the Placement side does), ComputeNode
and RequestSpec wire objects, and a real ``gantt-scheduler`` process.
"""

import datetime
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import dbs
import fleet
import harness
from oslo_config import cfg

from gantt import conf as gantt_conf
from gantt import objects
from gantt import rpc
from gantt.conf import filter_scheduler
from gantt.db import api as db_api
from gantt.db import migration
from gantt.db import models
from gantt.objects import compute_node as cn_obj
from gantt.objects import request_spec as rs_obj
from gantt.scheduler.state import update as update_mod

objects.register_all()

#: Nova's default ``[filter_scheduler] enabled_filters``
NOVA_FILTERS = ("ComputeFilter", "ComputeCapabilitiesFilter",
                "ImagePropertiesFilter", "ServerGroupAntiAffinityFilter",
                "ServerGroupAffinityFilter")
#: Nova's ``all_weighers``, by class name
NOVA_WEIGHERS = (
    "RAMWeigher", "CPUWeigher", "DiskWeigher", "IoOpsWeigher",
    "NumInstancesWeigher", "PCIWeigher", "ServerGroupSoftAffinityWeigher",
    "ServerGroupSoftAntiAffinityWeigher", "BuildFailureWeigher",
    "CrossCellWeigher", "HypervisorVersionWeigher", "ImagePropertiesWeigher",
    "MetricsWeigher")
CELL_UUID = str(uuid.UUID(int=1))
MiB = 1024 * 1024


# -- plugins and config ----------------------------------------------------


def _entry_points(group):
    return {ep.name for ep in importlib.metadata.entry_points(group=group)}


def plugin_choice():
    """Gantt's default filters and weighers, plus every Nova default that
    Gantt registers under the same name (looked up at run time).

    :returns: (filters, weighers, skipped): ``skipped`` lists defaults that
        are not registered in this install (a stale install: re-install)
    """
    known = _entry_points("gantt.scheduler.filters")
    known_w = _entry_points("gantt.scheduler.weighers")
    defaults = list(filter_scheduler.DEFAULT_FILTERS)
    default_w = _default_weighers()
    filters = [f for f in defaults if f in known]
    filters += [f for f in NOVA_FILTERS if f in known and f not in filters]
    weighers = [w for w in default_w if w in known_w]
    weighers += [w for w in NOVA_WEIGHERS
                 if w in known_w and w not in weighers]
    skipped = [x for x in defaults if x not in known]
    skipped += [x for x in default_w if x not in known_w]
    return filters, weighers, skipped


def _default_weighers():
    conf = cfg.ConfigOpts()
    filter_scheduler.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    return list(conf.filter_scheduler.enabled_weighers)


def make_conf(**overrides):
    """A private ConfigOpts with Gantt's options and the chosen plugins.

    :param overrides: ``{"group.option": value}``
    """
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    rpc.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    filters, weighers, _skipped = plugin_choice()
    conf.set_override("enabled_filters", filters, "filter_scheduler")
    conf.set_override("enabled_weighers", weighers, "filter_scheduler")
    for key, value in overrides.items():
        group, name = key.split(".", 1)
        conf.set_override(name, value, group)
    return conf


def plugin_config_lines():
    """The ``[filter_scheduler]`` lines of a daemon's config file."""
    filters, weighers, _skipped = plugin_choice()
    return ("[filter_scheduler]\nenabled_filters = %s\n"
            "enabled_weighers = %s\n" % (",".join(filters),
                                         ",".join(weighers)))


# -- the cloud as Gantt objects --------------------------------------------


def capabilities(host):
    return {"hypervisor_type": "QEMU",
            "hypervisor_version": str(host["hypervisor_version"]),
            "cpu_arch": "x86_64",
            "cpu_info:features": " ".join(fleet.CPU_FEATURES),
            "supported_instances": json.dumps([["x86_64", "qemu", "hvm"]])}


def stats(host):
    return {"failed_builds": str(host["failed_builds"]),
            "io_workload": str(host["io_ops"])}


def inventories(host):
    """``{class: (total, reserved, min, max, step, ratio)}``."""
    return {
        "VCPU": (host["vcpus"], 0, 1, host["vcpus"], 1, fleet.CPU_RATIO),
        "MEMORY_MB": (host["memory_mb"], fleet.RESERVED_MB, 1,
                      host["memory_mb"], 1, fleet.RAM_RATIO),
        "DISK_GB": (host["disk_gb"], 0, 1, host["disk_gb"], 1,
                    fleet.DISK_RATIO)}


def aggregate_uuids(cloud, host):
    return [cloud.aggregates[name]["uuid"] for name in host["aggregates"]]


def num_instances(host):
    return len(host["instances"]) + len(host["members"])


def host_report(cloud, host, received_at, sequence=1):
    """What the cache stores for one host (as a report would give it)."""
    return update_mod.HostUpdate(
        uuid=host["uuid"], host=host["name"], nodename=host["name"],
        cell_uuid=CELL_UUID, availability_zone=host["zone"],
        disabled=host["disabled"], report_sequence=sequence,
        num_instances=num_instances(host), num_io_ops=host["io_ops"],
        inventories=inventories(host), traits=frozenset(host["traits"]),
        aggregates=frozenset(aggregate_uuids(cloud, host)),
        capabilities=capabilities(host), stats=stats(host), metrics={},
        updated_at=None, received_at=received_at)


def fill_cache(cache, cloud, received_at):
    """Every host's report and usage into a HostStateCache."""
    for host in cloud.hosts:
        cache.apply_report(host_report(cloud, host, received_at))
        cache.apply_usage(host["uuid"], 1, dict(host["used"]))


def compute_node(cloud, host, sequence):
    """The ComputeNode an agent of ``host`` casts."""
    return cn_obj.ComputeNode(
        uuid=host["uuid"], host=host["name"], nodename=host["name"],
        cell_uuid=CELL_UUID, availability_zone=host["zone"],
        disabled=host["disabled"],
        inventories=[cn_obj.Inventory(
            resource_class=rc, total=t, reserved=r, min_unit=lo,
            max_unit=hi, step_size=step, allocation_ratio=ratio)
            for rc, (t, r, lo, hi, step, ratio) in inventories(host).items()],
        traits=list(host["traits"]),
        aggregates=aggregate_uuids(cloud, host),
        num_instances=num_instances(host), num_io_ops=host["io_ops"],
        capabilities=capabilities(host), stats=stats(host),
        report_sequence=sequence)


def request_spec(cloud, num_instances=1, group=True):
    """The shared request as a Gantt RequestSpec."""
    req = cloud.request()
    f = req["flavor"]
    spec = rs_obj.RequestSpec(
        instance_uuid=req["instance_uuid"], project_id=req["project_id"],
        user_id=req["user_id"], num_instances=num_instances,
        flavor=rs_obj.Flavor(
            name=f["name"], vcpus=f["vcpus"], memory_mb=f["memory_mb"],
            root_gb=f["root_gb"], ephemeral_gb=f["ephemeral_gb"],
            swap=f["swap"], extra_specs=dict(f["extra_specs"])),
        image=rs_obj.ImageMeta(id=fleet.make_uuid(7, 4), name="ubuntu-24.04",
                               properties=dict(req["image_properties"])))
    if group:
        g = req["group"]
        spec.instance_group = rs_obj.InstanceGroup(
            uuid=g["uuid"], name=g["name"], policy=g["policy"],
            members=list(g["members"]), hosts=list(g["hosts"]))
    return spec


class NoLookup:
    """DatabaseLookup stand-in for in-memory decisions: the spec says all."""

    def group_hosts(self, group_uuid):
        return {}

    def consumer_hosts(self, uuids):
        return set()


# -- databases --------------------------------------------------------------


def gantt_database(url):
    db = db_api.Database(url)
    migration.upgrade(db)
    return db


def _chunks(rows, size=5000):
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


class Populator:
    """Bulk-inserts the cloud into Gantt's schema (what agents' reports and
    earlier claims would have left there).

    :param per_instance: one consumer per instance (as a real cloud has);
        False stores each host's usage as a single consumer (fast to load
        at 100k hosts, same usage)
    """

    def __init__(self, db, cloud, per_instance=True):
        self.db = db
        self.cloud = cloud
        self.per_instance = per_instance
        self.now = datetime.datetime.utcnow().replace(microsecond=0)
        self.t = models.Base.metadata.tables
        self.done = 0
        self._group()

    def grow_to(self, count, progress=None, step=10000):
        """Insert the hosts not inserted yet, up to ``count``."""
        hosts = self.cloud.hosts[:count]
        for lo in range(self.done, len(hosts), step):
            self._insert(hosts[lo:lo + step])
            if progress:
                progress(min(lo + step, len(hosts)))
        self.done = len(hosts)
        if self.db.backend == "postgresql":
            with self.db.begin() as conn:
                conn.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence("
                    "'resource_providers', 'id'), "
                    "(SELECT max(id) FROM resource_providers))")
        dbs.analyze(self.db.engine)
        return self

    def _group(self):
        g = self.cloud.group
        with self.db.begin() as conn:
            conn.execute(self.t["instance_groups"].insert(), [{
                "uuid": g["uuid"], "policy": g["policy"],
                "max_server_per_host": 1, "generation": 0,
                "created_at": self.now}])

    def _insert(self, hosts):
        rows = {name: [] for name in (
            "resource_providers", "host_reports", "inventories",
            "provider_traits", "provider_aggregates", "consumers",
            "allocations")}
        for host in hosts:
            self._host_rows(host, rows)
        with self.db.begin() as conn:
            for name, values in rows.items():
                for chunk in _chunks(values):
                    conn.execute(self.t[name].insert(), chunk)

    def _host_rows(self, host, rows):
        rp_id = host["index"] + 1
        now = self.now
        rows["resource_providers"].append({
            "id": rp_id, "uuid": host["uuid"], "name": host["name"],
            "generation": 1, "root_provider_id": rp_id,
            "parent_provider_id": None, "created_at": now})
        rows["host_reports"].append({
            "resource_provider_id": rp_id, "host": host["name"],
            "nodename": host["name"], "cell_uuid": CELL_UUID,
            "availability_zone": host["zone"], "disabled": host["disabled"],
            "report_sequence": 1, "num_instances": num_instances(host),
            "num_io_ops": host["io_ops"],
            "details": json.dumps({"capabilities": capabilities(host),
                                   "stats": stats(host), "metrics": {}}),
            "agent_updated_at": None, "received_at": now})
        for rc, (total, reserved, lo, hi, step, ratio) in inventories(
                host).items():
            rows["inventories"].append({
                "resource_provider_id": rp_id, "resource_class": rc,
                "total": total, "reserved": reserved, "min_unit": lo,
                "max_unit": hi, "step_size": step, "allocation_ratio": ratio})
        rows["provider_traits"] += [
            {"resource_provider_id": rp_id, "trait": t}
            for t in host["traits"]]
        rows["provider_aggregates"] += [
            {"resource_provider_id": rp_id, "aggregate_uuid": a}
            for a in aggregate_uuids(self.cloud, host)]
        self._usage_rows(host, rp_id, rows)

    def _consumers(self, host, rp_id):
        """``(uuid, (vcpus, memory_mb, disk_gb))`` holding the host's usage."""
        if self.per_instance:
            return list(self.cloud.instances_of(host))
        size = fleet.INSTANCE_SIZES[1]
        members = len(host["members"])
        used = host["used"]
        rest = tuple(used[rc] - members * size[i] for i, rc in enumerate(
            ("VCPU", "MEMORY_MB", "DISK_GB")))
        out = [(fleet.make_uuid(rp_id, 6), rest)] if rest[0] > 0 else []
        return out + [(m, size) for m in host["members"]]

    def _usage_rows(self, host, rp_id, rows):
        members = set(host["members"])
        group = self.cloud.group["uuid"]
        for consumer, size in self._consumers(host, rp_id):
            rows["consumers"].append({
                "uuid": consumer, "project_id": fleet.PROJECT_ID,
                "user_id": fleet.USER_ID, "generation": 0,
                "instance_group_uuid": group if consumer in members else None,
                "created_at": self.now})
            for rc, amount in zip(("VCPU", "MEMORY_MB", "DISK_GB"), size,
                                  strict=True):
                rows["allocations"].append({
                    "resource_provider_id": rp_id, "consumer_uuid": consumer,
                    "resource_class": rc, "used": amount,
                    "created_at": self.now})


# -- the daemon -------------------------------------------------------------


class Daemon:
    """A real ``gantt-scheduler`` process on its own topic."""

    def __init__(self, db_url, workers=1, extra="", workdir=None,
                 topic=None, service_down_time=3600):
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix="gantt-bench-")
            harness.on_exit(shutil.rmtree, workdir, True)
        self.workdir = workdir
        self.topic = topic or "gantt-bench-" + uuid.uuid4().hex[:8]
        self.db_url = db_url
        self.conf_file = os.path.join(self.workdir, "gantt.conf")
        self.log_file = os.path.join(self.workdir, "scheduler.log")
        with open(self.conf_file, "w") as f:
            f.write("[DEFAULT]\ntransport_url = %s\n"
                    "[database]\nconnection = %s\n"
                    "[scheduler]\ntopic = %s\nworkers = %d\n"
                    "service_down_time = %d\n%s%s\n"
                    % (harness.RABBIT_URL, db_url, self.topic, workers,
                       service_down_time, plugin_config_lines(), extra))
        self.proc = None
        self.started_at = None

    def start(self):
        self._log = open(self.log_file, "w")
        self.started_at = time.monotonic()
        bindir = os.path.dirname(sys.executable)
        self.proc = subprocess.Popen(
            [os.path.join(bindir, "gantt-scheduler"), "--config-file",
             self.conf_file], stdout=self._log, stderr=subprocess.STDOUT)
        return self

    def client(self, timeout=60):
        from gantt.cmd import common
        from gantt.rpcapi import client as rpc_client
        conf = common.parse_args(["--config-file", self.conf_file],
                                 log=False)
        transport = rpc.get_transport(conf)
        return rpc_client.SchedulerClient(transport, self.topic,
                                          timeout=timeout), transport

    def wait_ready(self, timeout=120):
        """Until the worker answers a call that needs its cache loaded.

        A call sent before the worker's queue exists is dropped by the
        broker, so each try waits briefly and the next one is sent anew.

        :returns: seconds from process start
        """
        quick, transport = self.client(timeout=1)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError("gantt-scheduler exited with %s:\n%s"
                                       % (self.proc.returncode,
                                          self.log()[-3000:]))
                try:
                    quick.get_host_states(None, ["no-such-host"])
                    return time.monotonic() - self.started_at
                except Exception:
                    time.sleep(0.02)
        finally:
            transport.cleanup()
        raise RuntimeError("gantt-scheduler not ready in %ds:\n%s" % (
            timeout, self.log()[-3000:]))

    def worker_pids(self):
        """The process serving calls: the daemon, or its forked workers."""
        try:
            out = subprocess.run(
                ["ps", "-o", "pid=", "--ppid", str(self.proc.pid)],
                capture_output=True, text=True).stdout.split()
        except OSError:
            out = []
        return [int(p) for p in out] or [self.proc.pid]

    def log(self):
        with open(self.log_file) as f:
            return f.read()

    def server_times_ms(self):
        """Per-call handling times the worker logged ("Placed … in X ms")."""
        import re
        return [float(x) for x in re.findall(
            r"Placed \d+ instance\(s\) in ([0-9.]+) ms", self.log())]

    def stop(self, timeout=40):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self):
        self.start()
        if self.proc is not None:
            time.sleep(0.3)  # py-spy attaches
        return self

    def __exit__(self, *exc):
        self.stop()


class Profile:
    """py-spy sampling a process while a block runs (``--profile``).

    The raw stacks are summarised by :mod:`stacks` into the functions with
    the largest inclusive and self shares; nothing is done without py-spy.
    """

    def __init__(self, pid, enabled, seconds=600, rate=250, within=None):
        self.pid = pid
        self.within = within
        self.enabled = enabled and bool(_py_spy())
        self.seconds = seconds
        self.rate = rate
        self.proc = None
        self.raw = None
        self.result = None

    def __enter__(self):
        self.start()
        if self.proc is not None:
            time.sleep(0.3)  # py-spy attaches
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        if self.enabled:
            fd, self.raw = tempfile.mkstemp(suffix=".raw")
            os.close(fd)
            self.proc = subprocess.Popen(
                [_py_spy(), "record", "-p", str(self.pid), "-d",
                 str(int(self.seconds)), "-r", str(self.rate), "-f", "raw",
                 "-o", self.raw, "--nonblocking", "--full-filenames"]
                + (["--idle"] if self.within else []),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGINT)  # py-spy writes on SIGINT
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        import stacks
        try:
            self.result = stacks.summary(self.raw, top=30,
                                         within=self.within)
        except OSError:
            self.result = None
        finally:
            os.unlink(self.raw)


def _py_spy():
    path = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return path if os.path.exists(path) else None


def gantt_versions():
    return harness.versions("gantt", "numpy", "SQLAlchemy", "oslo.messaging",
                            "kombu", "PyMySQL", "psycopg2-binary")
