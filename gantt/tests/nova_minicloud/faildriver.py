"""The compute driver of the mini-cloud's computes: Nova's fake driver,
but the first spawn of an instance whose metadata says
``minicloud-fail-first`` fails (on whichever compute tries first), as a
host that turns out unable to build does: nova-compute then asks the
conductor to re-schedule, which claims the next alternate Gantt
returned. Which compute failed is written to
``$GANTT_MINICLOUD_FAILS/<instance uuid>`` (the computes share that
folder), so that the test knows without reading logs.
"""

import os

from nova import exception
import nova.conf
from nova.virt import fake

CONF = nova.conf.CONF
#: the metadata key that asks for one failed spawn
FAIL_FIRST = "minicloud-fail-first"


class FirstSpawnFailsDriver(fake.FakeDriver):
    """Nova's FakeDriver, with the one failure above."""

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
