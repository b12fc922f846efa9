"""The compute driver of the mini-cloud's computes: Nova's fake driver,
but the first spawn of an instance whose metadata says
``minicloud-fail-first`` fails (on whichever compute tries first), as a
host that turns out unable to build does: nova-compute then asks the
conductor to re-schedule, which claims the next alternate Gantt
returned. Which compute failed is written to
``$GANTT_MINICLOUD_FAILS/<instance uuid>`` (the computes share that
folder), so that the test knows without reading logs.

Its node is named ``<host>`` + :data:`NODE_SUFFIX`, not ``<host>``: a
hypervisor host name that is not the service's host name, as libvirt
computes whose ``[DEFAULT] host`` is short often have. nova-compute names
the resource provider after the node; Gantt must still place on the
service host (read from Nova's tables, ``[nova]
api_database_connection``).
"""

import os

from nova import exception
import nova.conf
from nova.virt import fake

CONF = nova.conf.CONF
#: the metadata key that asks for one failed spawn
FAIL_FIRST = "minicloud-fail-first"
#: what the node's name adds to the service's host name
NODE_SUFFIX = ".hv.minicloud"


class FirstSpawnFailsDriver(fake.FakeDriver):
    """Nova's FakeDriver, with the one failure and the node name above."""

    def init_host(self, host):
        super().init_host(host)
        self._set_nodes([host + NODE_SUFFIX])

    def spawn(self, context, instance, *args, **kwargs):
        if instance.metadata.get(FAIL_FIRST) and self._claim_failure(
                instance.uuid):
            raise exception.ComputeResourcesUnavailable(
                reason="%s asked for by the test" % FAIL_FIRST)
        return super().spawn(context, instance, *args, **kwargs)

    @staticmethod
    def _claim_failure(instance_uuid):
        path = os.path.join(os.environ["GANTT_MINICLOUD_FAILS"],
                            instance_uuid)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as f:
            f.write(CONF.host)
        return True
