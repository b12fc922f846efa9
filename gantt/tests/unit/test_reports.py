"""The Guru Meditation Report Gantt's commands produce (run in-process)."""

from importlib import metadata

from gantt import reports
from gantt import version
from gantt.cmd import common


def _run_report(conf):
    cls = type("Report", (reports._Report,), {"conf": conf})
    return cls(version.version_info).run()


def test_the_report_shows_gantt_and_this_process_options():
    conf = common.make_conf()
    conf([], default_config_files=[])
    conf.set_override("topic", "reported-topic", group="scheduler")
    conf.set_override("connection", "mysql+pymysql://u:secret@db/gantt",
                      group="database")

    text = _run_report(conf)

    assert "product = Gantt" in text
    assert "version = %s" % metadata.version("gantt") in text
    assert "topic = reported-topic" in text
    assert "secret" not in text            # secret options are masked
    assert "oslo_reports:" in text         # its own options are registered


def test_version_info_without_an_installed_package(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    assert version.version_info.version_string_with_package() == "unknown"
