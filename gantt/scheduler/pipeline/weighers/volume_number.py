"""VolumeNumberWeigher: how many volumes a backend holds, as in Cinder.

Cinder (``cinder/scheduler/weights/volume_number.py``) counts the volumes
its database places on the backend; in Gantt the backend reports that
count as its ``num_instances`` (the number of consumers on the provider).
The default multiplier, -1.0, prefers the backend with the fewest.
"""

from gantt.scheduler.pipeline.weighers import host_counts
from gantt.scheduler.pipeline.weighers import volume_capacity


class VolumeNumberWeigher(host_counts.NumInstancesWeigher):
    name = "VolumeNumberWeigher"
    multiplier_option = "volume_number_multiplier"
    multiplier_group = volume_capacity.GROUP
    provider_kinds = frozenset({"volume"})
