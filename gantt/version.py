"""What this installation of Gantt is, for reports and ``--version``."""

from importlib import metadata

PRODUCT = "Gantt"
VENDOR = "The Gantt developers"


class VersionInfo:
    """The version object oslo.reports' package section reads."""

    def vendor_string(self):
        return VENDOR

    def product_string(self):
        return PRODUCT

    def version_string_with_package(self):
        try:
            return metadata.version("gantt")
        except metadata.PackageNotFoundError:
            # running from a source tree that was never installed
            return "unknown"


version_info = VersionInfo()
