"""Every installed command says which build of Gantt it is.

``--version`` prints the version of the installed distribution, which pbr
computed from git when it was built (``0.1.0.dev93``: the 93rd commit
towards 0.1.0, or the tag itself for a release), and the commit it was
built from (``0.1.0.dev93 (git 5a4b27a)``), never "unknown". The
commands run as installed console scripts, from a directory outside the
source tree, as an operator runs them.
"""

import os
import re
import subprocess
import sys

import pytest

from gantt.tests.functional import waiting

BIN = os.path.dirname(sys.executable)
COMMANDS = ["gantt-scheduler", "gantt-manage", "gantt-status", "gantt",
            "gantt-demo"]
PBR_VERSION = re.compile(r"^\d+\.\d+\.\d+(\.dev\d+)? \(git [0-9a-f]{7,}\)$")


@pytest.fixture(scope="module")
def installed_version(tmp_path_factory):
    """The installed distribution's version, read from outside the tree
    (a build in the tree leaves a gantt.egg-info there, which the tree's
    own directory on sys.path would find first)."""
    out = subprocess.run(
        [sys.executable, "-c", "from importlib import metadata; "
         "import json; d = metadata.distribution('gantt'); "
         "print(d.version, json.loads(d.read_text('pbr.json'))"
         "['git_version'])"],
        cwd=tmp_path_factory.mktemp("elsewhere"), capture_output=True,
        text=True, check=True, timeout=waiting.CALL)
    version_, sha = out.stdout.split()
    return "%s (git %s)" % (version_, sha)


@pytest.mark.parametrize("command", COMMANDS)
def test_version_is_the_installed_build(command, installed_version,
                                        tmp_path):
    done = subprocess.run([os.path.join(BIN, command), "--version"],
                          cwd=tmp_path, capture_output=True, text=True,
                          timeout=waiting.CALL)
    assert done.returncode == 0, done.stderr
    printed = (done.stdout + done.stderr).strip()
    # oslo.config prints the version, cliff the program's name first
    assert printed in (installed_version,
                       "%s %s" % (command, installed_version))
    assert PBR_VERSION.match(installed_version), installed_version
