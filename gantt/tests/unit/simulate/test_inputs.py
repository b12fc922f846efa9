"""Fleet, workload and trace files: what parses, and the typed error,
with its line, for what does not."""

import pytest

from gantt.simulate import fleet as fleet_mod
from gantt.simulate import inputs
from gantt.simulate import workload

FLEET = """\
defaults:
  cpu_allocation_ratio: 2.0
shapes:
  - name: general
    count: 3
    vcpus: 32
    memory_mb: 262144
    disk_gb: 2000
  - {name: ram-rich, count: 2, vcpus: 16, memory_mb: 786432, disk_gb: 0,
     reserved_host_memory_mb: 8192, ram_allocation_ratio: 1.5}
"""


def _write(tmp_path, text, name="f.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _error(call, *args):
    with pytest.raises(inputs.InputError) as info:
        call(*args)
    return info.value


def test_fleet_hosts_in_file_order_with_their_inventory(tmp_path):
    fleet = fleet_mod.load_fleet(_write(tmp_path, FLEET))
    assert [h.name for h in fleet.hosts] == [
        "general-0", "general-1", "general-2", "ram-rich-3", "ram-rich-4"]
    general, ram = fleet.hosts[0].shape, fleet.hosts[3].shape
    assert general.inventory["VCPU"] == (32, 0, 2.0)
    assert general.inventory["MEMORY_MB"] == (262144, 4096, 1.0)
    assert ram.capacity("MEMORY_MB") == (786432 - 8192) * 1.5
    assert ram.capacity("DISK_GB") == 0
    assert fleet.shapes() == {"general": 3, "ram-rich": 2}


def test_fleet_what_if_adds_hosts_of_a_shape(tmp_path):
    fleet = fleet_mod.load_fleet(_write(tmp_path, FLEET))
    count, shape = fleet_mod.parse_addition("20xram-rich")
    bigger = fleet.add(count, shape)
    assert bigger.shapes() == {"general": 3, "ram-rich": 22}
    assert len({h.name for h in bigger.hosts}) == 25
    with pytest.raises(KeyError, match="no host shape 'gpu'"):
        fleet.add(1, "gpu")
    with pytest.raises(ValueError, match="COUNTxSHAPE"):
        fleet_mod.parse_addition("ram-rich")


@pytest.mark.parametrize("text,line,words", [
    ("shapes: [\n  - name: x\n", 2, "not valid YAML"),
    ("shapes:\n  - name: a\n    count: 1\n    vcpus: 4\n    memory_mb: 8\n"
     "    disks: 3\n", 2, "unknown key(s) disks"),
    ("shapes:\n  - {name: a, count: -1, vcpus: 4, memory_mb: 8192}\n", 2,
     "'count' must be at least 1"),
    ("shapes:\n  - {name: a, count: 1, vcpus: four, memory_mb: 8}\n", 2,
     "'vcpus' must be a number"),
    ("shapes:\n  - {name: a, count: 1, vcpus: 4}\n", 2,
     "'memory_mb' is required"),
    ("shapes:\n  - {name: a, count: 1, vcpus: 4, memory_mb: 8192}\n"
     "  - {name: a, count: 1, vcpus: 4, memory_mb: 8192}\n", 3,
     "listed twice"),
    ("shapes:\n  - {name: a, count: 1, vcpus: 4, memory_mb: 1024}\n", 2,
     "reserved 4096 is more than the total 1024"),
    ("hosts: []\n", 1, "unknown key(s) hosts"),
    ("shapes: []\n", 1, "'shapes' must be a non-empty list"),
])
def test_bad_fleet_names_the_line(tmp_path, text, line, words):
    path = _write(tmp_path, text)
    error = _error(fleet_mod.load_fleet, path)
    assert error.line == line
    assert words in str(error)
    assert str(error).startswith("%s:%d: " % (path, line))


def test_missing_fleet_file_is_an_input_error(tmp_path):
    error = _error(fleet_mod.load_fleet, str(tmp_path / "nope.yaml"))
    assert error.line is None
    assert "No such file" in str(error)


def test_workload_file_and_its_errors(tmp_path):
    gen = workload.load_workload(_write(tmp_path, (
        "seed: 3\narrivals: 50\nmean_lifetime: 10\nflavors:\n"
        "  - {name: tiny, vcpus: 1, memory_mb: 512, weight: 2}\n")))
    assert gen.seed == 3 and gen.arrivals == 50 and gen.mean_lifetime == 10
    assert gen.mix == ((workload.Flavor("tiny", 1, 512, 0), 2.0),)
    error = _error(workload.load_workload, _write(tmp_path, (
        "arrivals: 5\nflavors:\n  - {name: a, vcpus: 1, memory_mb: 1}\n"
        "  - {name: b, vcpus: 1, memory_mb: 1, weight: 0}\n"), "w.yaml"))
    assert error.line == 4 and "positive weight" in str(error)


def test_generated_churn_is_seeded_and_deletes_after_creates():
    gen = workload.Generator(mix=workload.DEFAULT_MIX, arrivals=400,
                             mean_lifetime=50.0, initial=20, seed=5)
    events = workload.generate(gen)
    assert events == workload.generate(gen)
    created = {}
    for event in events:
        if event.kind == "create":
            created[event.instance] = event.time
        else:
            assert created[event.instance] <= event.time
    assert len(created) == 420
    assert sum(e.time == 0.0 for e in events) == 20
    # churn: many die before the end, which is the last arrival
    assert 250 < sum(e.kind == "delete" for e in events) < 420
    assert events[-1].time == max(created.values())


def test_scaled_mix_changes_only_the_named_flavor():
    mix = workload.scale_mix(workload.DEFAULT_MIX, {"r1.xlarge": 1.5})
    before, after = dict(workload.DEFAULT_MIX), dict(mix)
    for flavor, weight in after.items():
        factor = 1.5 if flavor.name == "r1.xlarge" else 1.0
        assert weight == before[flavor] * factor
    with pytest.raises(KeyError, match="'x9' is not in the mix"):
        workload.scale_mix(workload.DEFAULT_MIX, {"x9": 2.0})


FLAVORS = {f.name: f for f, _w in workload.DEFAULT_MIX}


def test_trace_csv_and_json_lines_give_the_same_events(tmp_path):
    csv_path = _write(tmp_path, (
        "time,event,instance,flavor\n"
        "0,create,a,m1.small\n"
        "2.5,delete,a,\n"
        "1,create,b,r1.xlarge\n"), "t.csv")
    json_path = _write(tmp_path, (
        '{"time": 0, "event": "create", "instance": "a", '
        '"flavor": "m1.small"}\n\n'
        '{"time": 2.5, "event": "delete", "instance": "a"}\n'
        '{"time": 1, "event": "create", "instance": "b", '
        '"flavor": "r1.xlarge"}\n'), "t.json")
    events = workload.load_trace(csv_path, FLAVORS)
    assert events == workload.load_trace(json_path, FLAVORS)
    assert [(e.time, e.kind, e.instance) for e in events] == [
        (0.0, "create", "a"), (1.0, "create", "b"), (2.5, "delete", "a")]
    assert events[1].flavor == FLAVORS["r1.xlarge"]


@pytest.mark.parametrize("text,line,words", [
    ("time,event\n0,create\n", 1, "missing instance"),
    ("time,event,instance,flavor\n0,create,a,m1.small\nx,create,b,"
     "m1.small\n", 3, "time must be a number"),
    ("time,event,instance,flavor\n0,boot,a,m1.small\n", 2,
     "event must be create or delete"),
    ("time,event,instance,flavor\n0,create,a,m9.huge\n", 2,
     "unknown flavor 'm9.huge'"),
    ("time,event,instance,flavor\n0,create,a,m1.small\n1,create,a,"
     "m1.small\n", 3, "created twice"),
    ("time,event,instance,flavor\n5,create,a,m1.small\n1,delete,a,\n", 3,
     "deleted before it is created"),
])
def test_bad_csv_trace_names_the_line(tmp_path, text, line, words):
    error = _error(workload.load_trace, _write(tmp_path, text, "t.csv"),
                   FLAVORS)
    assert (error.line, words in str(error)) == (line, True), str(error)


def test_bad_json_trace_names_the_line(tmp_path):
    path = _write(tmp_path, ('{"time": 0, "event": "create", '
                             '"instance": "a", "flavor": "m1.small"}\n'
                             '{"time": 1, "event": "delete",\n'), "t.jsonl")
    error = _error(workload.load_trace, path, FLAVORS)
    assert error.line == 2 and "not a JSON object" in str(error)


def _state(host, used_mb, total_mb=65536, ratio=1.0):
    from gantt.objects import host_state
    resources = [host_state.ResourceUsage(
        resource_class=rc, total=total, reserved=0, allocation_ratio=r,
        used=used, free=0) for rc, total, r, used in (
            ("VCPU", 16, 1.0, 0), ("MEMORY_MB", total_mb, ratio, used_mb))]
    return host_state.HostState(host=host, resources=resources)


def test_live_hosts_share_shapes_and_keep_what_they_hold():
    fleet = fleet_mod.from_host_states([
        _state("b", 1024), _state("a", 0), _state("c", 90000, ratio=1.5),
        _state("d", 99999, total_mb=32768)])
    assert [h.name for h in fleet.hosts] == ["a", "b", "c", "d"]
    assert fleet.shapes() == {"16c-64G-0G": 2, "16c-64G-0G-2": 1,
                              "16c-32G-0G": 1}
    a, b, c, d = fleet.hosts
    assert a.shape == b.shape != c.shape
    assert (a.held, b.held, c.held) == ({}, {"MEMORY_MB": 1024},
                                        {"MEMORY_MB": 90000})
    # overcommitted since: it holds at most its capacity
    assert d.held == {"MEMORY_MB": 32768}
    assert d.shape.inventory["DISK_GB"] == (0, 0, 1.0)
