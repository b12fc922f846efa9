"""``python -m gantt.tests.nova_minicloud.compute``: nova-compute with the
test's driver (:mod:`.faildriver`).

Nova loads ``[DEFAULT] compute_driver`` as ``nova.virt.<name>``
(``nova.virt.driver.load_compute_driver``), so a driver outside Nova's
package cannot be named there. This registers the test's driver module
as ``nova.virt.minicloud_faildriver`` and runs ``nova.cmd.compute.main``,
the entry point of the ``nova-compute`` console script: the service is
Nova's own, only the module it loads its driver from is added.
"""

import sys

from nova.cmd import compute  # first: Nova's start-up imports

from gantt.tests.nova_minicloud import faildriver


def main():
    sys.modules["nova.virt.minicloud_faildriver"] = faildriver
    sys.argv[0] = "nova-compute"
    return compute.main()


if __name__ == "__main__":
    sys.exit(main())
