"""AggregateImagePropertiesIsolation: image properties vs aggregate keys.

For every metadata key of the host's aggregates that the image also sets
(only keys under ``aggregate_image_properties_isolation_namespace`` and its
separator, when that option is set), the image's value must be one of the
aggregates' values (comma-separated lists). Keys the image does not set
never exclude a host.
"""

import numpy as np

from gantt.scheduler.pipeline import filters
from gantt.scheduler.state import aggregates


class AggregateImagePropertiesIsolation(filters.BaseFilter):
    name = "AggregateImagePropertiesIsolation"
    provider_kinds = filters.COMPUTE

    def _considered(self, key):
        fs = self.conf.filter_scheduler
        namespace = fs.aggregate_image_properties_isolation_namespace
        return not namespace or key.startswith(
            namespace + fs.aggregate_image_properties_isolation_separator)

    def applies(self, request):
        return bool(request.image_properties)

    def host_passes(self, host, request):
        props = request.image_properties
        for key, options in aggregates.metadata(host).items():
            if not self._considered(key):
                continue
            prop = props.get(key)
            if prop and str(prop) not in options:
                return False
        return True

    def passes_columns(self, view, request):
        props = request.image_properties
        fail = None
        for key in view.aggregates.keys():
            prop = props.get(key)
            if not prop or not self._considered(key):
                continue
            has = aggregates.rows_with_key(view, key)
            ok = aggregates.rows_where(
                view, key, lambda v, p=str(prop): p in aggregates.split(v))
            bad = has & ~ok
            fail = bad if fail is None else fail | bad
        return ~fail if fail is not None else np.ones(view.n, dtype=bool)
