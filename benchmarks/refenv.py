"""The reference venv: Nova, Placement and wsgi-intercept, never in .venv.

Nova pins versions that conflict with Gantt's, so the reference systems
live in their own virtualenv, ``benchmarks/.venv-ref`` (git-ignored). It is
created on first use and re-created when ``constraints-ref.txt`` or the
package list below changes (a stamp file records what was installed).

    python benchmarks/refenv.py          # create or refresh it, then exit
"""

import hashlib
import os
import shutil
import subprocess
import sys

import harness

PACKAGES = ("nova", "openstack-placement", "wsgi-intercept", "PyMySQL",
            "psycopg2-binary")
CONSTRAINTS = os.path.join(harness.BENCH_DIR, "constraints-ref.txt")


def _wanted():
    with open(CONSTRAINTS, "rb") as f:
        data = f.read()
    return hashlib.sha1(data + " ".join(PACKAGES).encode()).hexdigest()


def _base_python():
    # a venv's interpreter makes venvs from its base installation
    return getattr(sys, "_base_executable", None) or sys.executable


def ensure(progress=harness.log):
    """Create or refresh the reference venv; returns its interpreter."""
    stamp = os.path.join(harness.REF_VENV, ".installed")
    python = harness.ref_python()
    want = _wanted()
    try:
        with open(stamp) as f:
            if f.read().strip() == want and os.path.exists(python):
                return python
    except OSError:
        pass
    if os.path.exists(harness.REF_VENV):
        shutil.rmtree(harness.REF_VENV)
    progress("creating the reference venv %s (nova, openstack-placement; "
             "about a minute)" % harness.REF_VENV)
    subprocess.run([_base_python(), "-m", "venv", harness.REF_VENV],
                   check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "-c", CONSTRAINTS]
                   + list(PACKAGES), check=True)
    with open(stamp, "w") as f:
        f.write(want)
    progress("reference venv ready")
    return python


if __name__ == "__main__":
    print(ensure())
