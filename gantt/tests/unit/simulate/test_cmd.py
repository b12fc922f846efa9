"""gantt-simulate's command line: every mistake is one line on stderr
and exit status 2, said before anything runs."""

import pytest

from gantt.cmd import simulate

FLEET = ("shapes:\n  - {name: general, count: 2, vcpus: 8, "
         "memory_mb: 16384, disk_gb: 100}\n")


@pytest.fixture
def fleet(tmp_path):
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET)
    return str(path)


def _fails(capsys, *argv):
    assert simulate.main(list(argv)) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = [line for line in out.err.splitlines() if " INFO " not in line]
    assert len(lines) == 1, out.err
    assert lines[0].startswith("gantt-simulate: ")
    return lines[0][len("gantt-simulate: "):]


def test_a_fleet_is_needed_once(capsys, fleet):
    assert _fails(capsys) == "give one of --fleet or --from-live"
    assert _fails(capsys, "--fleet", fleet, "--from-live", "x.conf") == (
        "give one of --fleet or --from-live")


def test_what_if_flags_name_what_exists(capsys, fleet):
    assert _fails(capsys, "--fleet", fleet, "--add-hosts", "3xgpu") == (
        "--add-hosts no host shape 'gpu' in the fleet (general)")
    assert "expected COUNTxSHAPE" in _fails(
        capsys, "--fleet", fleet, "--add-hosts", "gpu")
    assert _fails(capsys, "--fleet", fleet, "--scale-flavor", "x9=2") == (
        "--scale-flavor: flavor 'x9' is not in the mix (c1.xlarge, "
        "d1.large, m1.large, m1.medium, m1.small, m1.xlarge, r1.xlarge)")
    assert "expected NAME=FACTOR" in _fails(
        capsys, "--fleet", fleet, "--scale-flavor", "r1.xlarge")


def test_generator_flags_do_not_apply_to_a_trace(capsys, fleet, tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("time,event,instance,flavor\n0,create,a,m1.small\n")
    assert "shape a generated workload, not a --trace" in _fails(
        capsys, "--fleet", fleet, "--trace", str(trace), "--arrivals", "5")


def test_one_database_keeps_one_policy(capsys, fleet, tmp_path):
    assert "give one policy" in _fails(
        capsys, "--fleet", fleet, "--policy", "spread", "--policy", "stack",
        "--database", "sqlite:///%s/x.sqlite" % tmp_path)


def test_an_unreachable_live_gantt_is_one_line(capsys, tmp_path):
    conf = tmp_path / "gantt.conf"
    conf.write_text("[DEFAULT]\ntransport_url = "
                    "rabbit://guest:guest@127.0.0.1:1/\n")
    message = _fails(capsys, "--from-live", str(conf))
    assert message.startswith("--from-live: ")
    assert "127.0.0.1:1" in message


def test_examples_parse(capsys, tmp_path):
    from gantt.simulate import fleet as fleet_mod
    from gantt.simulate import workload
    for flag, load in (("--example-fleet", fleet_mod.load_fleet),
                       ("--example-workload", workload.load_workload)):
        assert simulate.main([flag]) == 0
        path = tmp_path / "example.yaml"
        path.write_text(capsys.readouterr().out)
        assert load(str(path))
