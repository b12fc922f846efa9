"""The deploy entry point and the policy defaults."""

import importlib

import webob

from gantt.api import policies
from gantt.db import migration


def test_wsgi_application_reads_the_config_dir(tmp_path, monkeypatch,
                                              sqlite_db):
    (tmp_path / "gantt.conf").write_text(
        "[database]\nconnection = %s\n[api]\nauth_strategy = noauth2\n"
        "notify_workers = false\n" % sqlite_db.url)
    monkeypatch.setenv("GANTT_CONFIG_DIR", str(tmp_path))
    from gantt.api import wsgi
    wsgi = importlib.reload(wsgi)     # ``application`` built on first use
    resp = webob.Request.blank("/resource_providers", headers={
        "X-Auth-Token": "admin"}).get_response(wsgi.application)
    assert resp.status_int == 200
    assert resp.json == {"resource_providers": []}
    assert migration.current_version(sqlite_db) == migration.head_version()


def test_every_rule_has_placement_s_name_and_default():
    rules = {r.name: r.check_str for r in policies.list_rules()}
    assert rules["placement:reshaper:reshape"] == "rule:service_api"
    assert rules["placement:usages"] == (
        "rule:admin_or_project_reader_or_service_api")
    assert all(check == "rule:admin_or_service_api"
               for name, check in rules.items()
               if name.startswith("placement:") and name not in (
                   "placement:reshaper:reshape", "placement:usages"))
    assert len([n for n in rules if n.startswith("placement:")]) == 33


def test_gantt_api_refuses_a_database_not_synced(tmp_path, capsys):
    from gantt.cmd import api as api_cmd
    conf = tmp_path / "gantt.conf"
    conf.write_text("[database]\nconnection = sqlite:///%s\n" %
                    (tmp_path / "empty.sqlite"))
    assert api_cmd.main(["--config-file", str(conf)]) == 2
    assert "gantt-manage db sync" in capsys.readouterr().err
