"""Every Gantt command says which Gantt it is (``--version``)."""

from importlib import metadata
import json
import pathlib
import subprocess
import sys

import pytest

from gantt import version
from gantt.cmd import cli
from gantt.cmd import demo
from gantt.cmd import manage
from gantt.cmd import scheduler


@pytest.mark.parametrize("main", [scheduler.main, manage.main, cli.main,
                                  demo.main])
def test_version_is_printed_and_nothing_else_happens(main, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    out = capsys.readouterr()
    assert (out.out + out.err).strip() == _installed_build()


def _console_scripts():
    return sorted(ep.name for ep in metadata.distribution(
        "gantt").entry_points if ep.group == "console_scripts")


@pytest.mark.parametrize("script", _console_scripts())
def test_every_console_script_answers_version(script):
    """Run as an operator runs it, from the venv's bin directory: a new
    command without ``--version`` (or one that prints something else, or
    starts work first) fails here, not in a bug report."""
    path = pathlib.Path(sys.executable).parent / script
    done = subprocess.run([str(path), "--version"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).strip() == _installed_build()


def _installed_build():
    # (a stale in-tree egg-info from a build without pbr has no pbr.json:
    # the functional test and tools/wheel_check.sh see a real install)
    dist = metadata.distribution("gantt")
    recorded = dist.read_text("pbr.json")
    if recorded is None:
        return dist.version
    return "%s (git %s)" % (dist.version, json.loads(recorded)["git_version"])


class _Built:
    """A distribution as pbr leaves it: a version, maybe a pbr.json."""

    def __init__(self, version_, pbr_json):
        self.version = version_
        self._pbr_json = pbr_json

    def read_text(self, name):
        return self._pbr_json if name == "pbr.json" else None


def test_the_build_names_its_commit():
    built = _Built("0.1.0.dev7", '{"git_version": "5a4b27a"}')
    assert version.build_string(built) == "0.1.0.dev7 (git 5a4b27a)"


def test_a_build_without_git_says_its_version_alone():
    # built from a tarball with PBR_VERSION: no commit was recorded
    assert version.build_string(_Built("0.2.0", None)) == "0.2.0"
    assert version.build_string(_Built("0.2.0", "not json")) == "0.2.0"
