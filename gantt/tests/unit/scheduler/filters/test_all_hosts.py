"""AllHostsFilter: lets every host through, whatever its state."""

from gantt.scheduler.pipeline.filters import all_hosts
from gantt.tests.unit.scheduler import helpers


def test_all_hosts_pass(conf):
    view = helpers.make_view(helpers.node("a"),
                             helpers.node("b", disabled=True, vcpus=1),
                             ages={"b": 3600})
    helpers.assert_both_paths(all_hosts.AllHostsFilter(conf), view,
                              helpers.make_request(), [True, True])
