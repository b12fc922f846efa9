"""Two ConfigOpts of one process do not share overrides or defaults."""

from oslo_config import cfg

from gantt import conf as gantt_conf


def _loaded():
    conf = cfg.ConfigOpts()
    gantt_conf.register_opts(conf)
    conf([], project="gantt", default_config_files=[])
    return conf


def test_an_override_stays_on_its_config():
    mine, theirs = _loaded(), _loaded()
    mine.set_override("build_failure_weight_multiplier", 0.0,
                      "filter_scheduler")
    assert mine.filter_scheduler.build_failure_weight_multiplier == 0.0
    assert theirs.filter_scheduler.build_failure_weight_multiplier == 1e6


def test_a_default_set_later_stays_on_its_config():
    mine = _loaded()
    mine.set_default("alias", ["a"], "pci")
    theirs = _loaded()
    assert mine.pci.alias == ["a"]
    assert theirs.pci.alias == []
