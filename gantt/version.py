"""What this installation of Gantt is, for reports and ``--version``.

pbr computes the version from git when the package is built
(``0.1.0.dev166``: the 166th commit towards 0.1.0, or the tag itself for a
release) and records the commit in the distribution's ``pbr.json``; both
are read from the installed distribution, never from a git checkout, so a
wheel installed anywhere says which build it is.
"""

from importlib import metadata
import json

PRODUCT = "Gantt"
VENDOR = "The Gantt developers"


def _distribution():
    try:
        return metadata.distribution("gantt")
    except metadata.PackageNotFoundError:
        # running from a source tree that was never installed
        return None


def git_sha(dist):
    """The short commit the distribution was built from, or None."""
    try:
        return json.loads(dist.read_text("pbr.json") or "{}").get(
            "git_version")
    except ValueError:
        return None


def build_string(dist):
    """``0.1.0.dev166 (git 5a4b27a)``; the version alone when the build
    recorded no commit (built with ``PBR_VERSION`` outside git)."""
    sha = git_sha(dist)
    return dist.version if not sha else "%s (git %s)" % (dist.version, sha)


class VersionInfo:
    """The version object oslo.reports' package section reads."""

    def vendor_string(self):
        return VENDOR

    def product_string(self):
        return PRODUCT

    def version_string_with_package(self):
        dist = _distribution()
        return "unknown" if dist is None else build_string(dist)


version_info = VersionInfo()
