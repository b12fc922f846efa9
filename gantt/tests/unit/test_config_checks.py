"""Every option value is read before anything relies on it.

oslo.config converts a value only when it is read: without these checks a
typo in the config file surfaces wherever some code first reads the option
(in a forked worker, as a traceback in the log only).
"""

import pytest

from gantt import exception
from gantt.cmd import common


def _conf(tmp_path, text):
    path = tmp_path / "gantt.conf"
    path.write_text(text)
    return common.parse_args(["--config-file", str(path)], log=False)


def test_a_good_config_has_no_bad_values(tmp_path):
    conf = _conf(tmp_path, "[filter_scheduler]\nram_weight_multiplier = 2.5\n"
                           "[scheduler]\nworkers = 3\n")
    assert common.bad_values(conf) == []
    common.check_values(conf)       # does not raise


def test_each_bad_value_is_named_with_its_group_and_reason(tmp_path):
    conf = _conf(tmp_path, "[DEFAULT]\nrpc_response_timeout = soon\n"
                           "[filter_scheduler]\nram_weight_multiplier = abc\n"
                           "[scheduler]\nworkers = 0\n")
    found = {(bad.group, bad.option): bad.reason
             for bad in common.bad_values(conf)}
    assert found == {
        ("DEFAULT", "rpc_response_timeout"):
            "invalid literal for int() with base 10: 'soon'",
        ("filter_scheduler", "ram_weight_multiplier"):
            "could not convert string to float: 'abc'",
        ("scheduler", "workers"): "Should be greater than or equal to 1",
    }


def test_options_of_oslo_messaging_are_read_before_a_transport_exists(
        tmp_path):
    # [oslo_messaging_rabbit] is registered by the rabbit driver only: the
    # check registers it so that a bad value fails before any worker forks
    conf = _conf(tmp_path, "[oslo_messaging_rabbit]\n"
                           "heartbeat_timeout_threshold = often\n")
    with pytest.raises(exception.ConfigurationError) as raised:
        common.check_values(conf)
    assert str(raised.value) == (
        "Configuration error: [oslo_messaging_rabbit] "
        "heartbeat_timeout_threshold: invalid literal for int() with base "
        "10: 'often'")


def test_a_bad_logging_option_is_named_before_logging_is_set_up(tmp_path):
    path = tmp_path / "gantt.conf"
    path.write_text("[DEFAULT]\nrate_limit_burst = many\n")
    with pytest.raises(exception.ConfigurationError,
                       match=r"\[DEFAULT\] rate_limit_burst: invalid "):
        common.parse_args(["--config-file", str(path)])


@pytest.mark.parametrize("url,says", [
    ("not a url", "Could not parse SQLAlchemy URL"),
    ("nonsense+driver://x/y", "Can't load plugin: sqlalchemy.dialects"),
    ("mysql://root@127.0.0.1/gantt", "No module named 'MySQLdb'"),
    ("sqlite:////nonexistent/directory/gantt.sqlite",
     "unable to open database file"),
])
def test_a_database_that_cannot_be_used_is_a_configuration_error(
        tmp_path, url, says):
    conf = _conf(tmp_path, "[database]\nconnection = %s\n" % url)
    with pytest.raises(exception.ConfigurationError) as raised:
        common.schema_version(conf)
    message = str(raised.value)
    assert message.startswith("Configuration error: [database] connection: "
                              "cannot use the database: ")
    assert says in message
    assert "\n" not in message


def test_schema_version_of_a_usable_database(tmp_path):
    conf = _conf(tmp_path, "[database]\nconnection = sqlite:///%s\n"
                 % (tmp_path / "new.sqlite"))
    assert common.schema_version(conf) is None
