"""gantt-manage: database schema and maintenance commands."""

import sys

from oslo_config import cfg

from gantt.cmd import common
from gantt.db import api as db_api
from gantt.db import migration


def _db_sync(conf):
    db = db_api.Database.from_conf(conf)
    before = migration.current_version(db)
    migration.upgrade(db)
    after = migration.current_version(db)
    print("Database schema: %s -> %s" % (before or "empty", after))


def _db_version(conf):
    db = db_api.Database.from_conf(conf)
    print(migration.current_version(db) or "empty")


def _add_commands(subparsers):
    db = subparsers.add_parser("db", help="database schema")
    db_sub = db.add_subparsers(dest="action")
    db_sub.required = True
    sync = db_sub.add_parser("sync", help="upgrade the schema to the newest")
    sync.set_defaults(func=_db_sync)
    version = db_sub.add_parser("version", help="print the schema version")
    version.set_defaults(func=_db_version)


def main(argv=None):
    command = cfg.SubCommandOpt("category", title="Commands",
                                handler=_add_commands)
    conf = common.parse_args(sys.argv[1:] if argv is None else argv,
                             description="Gantt management",
                             cli_opts=[command], log=False)
    conf.category.func(conf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
