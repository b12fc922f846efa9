"""Loading filters and weighers by their entry-point names."""

import pytest

from gantt import exception
from gantt.conf import filter_scheduler
from gantt.scheduler.pipeline import plugins

ALL_FILTERS = [
    "AggregateImagePropertiesIsolation", "AggregateInstanceExtraSpecsFilter",
    "AggregateIoOpsFilter", "AggregateMultiTenancyIsolation",
    "AggregateNumInstancesFilter", "AggregateTypeAffinityFilter",
    "AllHostsFilter", "AvailabilityZoneFilter", "CapabilitiesFilter",
    "CapacityFilter", "ComputeCapabilitiesFilter",
    "ComputeFilter", "DifferentHostFilter", "DriverFilter",
    "ImagePropertiesFilter",
    "IoOpsFilter", "IsolatedHostsFilter", "JsonFilter", "MetricsFilter",
    "NUMATopologyFilter", "NumInstancesFilter", "PciPassthroughFilter",
    "ResourceFilter", "SameHostFilter", "ServerGroupAffinityFilter",
    "ServerGroupAntiAffinityFilter", "ServerGroupTopologyFilter",
    "SimpleCIDRAffinityFilter",
]
ALL_WEIGHERS = [
    "BuildFailureWeigher", "CPUWeigher", "CrossCellWeigher", "DiskWeigher",
    "HypervisorVersionWeigher", "ImagePropertiesWeigher", "IoOpsWeigher",
    "MetricsWeigher", "NumInstancesWeigher", "PCIWeigher", "RAMWeigher",
    "BalancedAllocationWeigher",
    "ServerGroupSoftAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher",
    "ServerGroupDistanceWeigher", "CapacityWeigher",
    "AllocatedCapacityWeigher", "VolumeNumberWeigher", "GoodnessWeigher",
]


@pytest.mark.parametrize("namespace, names", [
    (plugins.FILTERS, ALL_FILTERS),
    (plugins.WEIGHERS, ALL_WEIGHERS),
    (plugins.FILTERS, list(reversed(filter_scheduler.DEFAULT_FILTERS))),
])
def test_plugins_load_in_the_configured_order(conf, namespace, names):
    loaded = plugins.load(namespace, names, conf)
    # NoValidHost summaries and statistics use ``name``: it must be the
    # name operators write in enabled_filters / enabled_weighers
    assert [p.name for p in loaded] == names
    assert all(p.conf is conf for p in loaded)


def test_unknown_plugin_names_are_listed_with_the_known_ones(conf):
    with pytest.raises(exception.ConfigurationError) as raised:
        plugins.load(plugins.FILTERS, ["ComputeFilter", "NopeFilter",
                                       "AlsoMissing"], conf)
    message = str(raised.value)
    assert "unknown filters AlsoMissing, NopeFilter" in message
    assert "known: " + ", ".join(ALL_FILTERS) in message
