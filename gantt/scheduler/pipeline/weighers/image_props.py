"""ImagePropertiesWeigher: hosts already running instances whose images
share the requested image's properties.

Gantt does not see the instances of a host, so agents report the counts in
their ``stats``: the key ``image_props:<property>=<value>`` holds how many
instances on the host run an image with that property value (e.g.
``image_props:os_distro=ubuntu: "3"``). A host's raw weight is, for each
property of the requested image, that count times the property's ratio in
``image_props_weight_setting`` (every property 1 when the setting is empty,
unlisted ones 0 otherwise). As in Nova the weigher does nothing while
``image_props_weight_multiplier`` is 0.
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.pipeline import weighers
from gantt.scheduler.state import columns

PREFIX = "image_props:"


def stat_key(prop, value):
    return "%s%s=%s" % (PREFIX, prop, value)


class ImagePropertiesWeigher(weighers.BaseWeigher):
    provider_kinds = filters.COMPUTE
    name = "ImagePropertiesWeigher"
    multiplier_option = "image_props_weight_multiplier"

    def _ratios(self, request):
        """``{stat key: ratio}`` for the requested image's properties."""
        if self.config_multiplier() == 0.0:
            return {}
        setting = {}
        for item in self.conf.filter_scheduler.image_props_weight_setting:
            name, sep, ratio = item.partition("=")
            try:
                if sep and name.strip():
                    setting[name.strip()] = float(ratio)
            except ValueError:
                continue
        out = {}
        for prop, value in request.image_properties.items():
            ratio = setting.get(prop, 0.0) if setting else 1.0
            if ratio:
                out[stat_key(prop, value)] = ratio
        return out

    def constant(self, view, request):
        return not self._ratios(request)

    def weigh_host(self, host, request):
        return float(sum(ratio * columns.as_float(host.stats.get(key))
                         for key, ratio in self._ratios(request).items()))

    def weigh_columns(self, view, request, rows):
        total = np.zeros(view.n)
        for key, ratio in self._ratios(request).items():
            total += ratio * view.stat(key, columns.as_float, 0.0, float,
                                      meaning="as_float")
        return total[rows]
