"""``gantt aggregate …``: host aggregates, as python-openstackclient's
``openstack aggregate`` commands shape them.

The scheduler stores an aggregate whole (``set_aggregate`` replaces its
name, hosts and metadata): a command that changes part of one reads it,
changes that part and stores it back; the last writer wins. An aggregate
is named on the command line by uuid or by name. Its availability zone is
its ``availability_zone`` metadata key; ``properties`` are the other keys.
"""

import uuid as uuid_mod

from cliff import command
from cliff import lister
from cliff import show
from oslo_utils import uuidutils

from gantt import zones
from gantt.cmd.cli import base
from gantt.objects import aggregate as aggregate_obj

ZONE = zones.KEY
_FIELDS = ("uuid", "name", "availability_zone", "hosts", "properties")


def _fields(agg):
    """An aggregate as ``(field names, values)`` of _FIELDS."""
    props = {k: v for k, v in agg.metadata.items() if k != ZONE}
    return _FIELDS, (agg.uuid, agg.name, agg.metadata.get(ZONE),
                     base.ListColumn(agg.hosts), base.DictColumn(props))


def find(rpc, ref):
    """The aggregate whose uuid or (only one's) name is ``ref``.

    :raises: CommandError when there is none, or several of that name
    """
    aggregates = rpc.call("get_aggregates")
    for agg in aggregates:
        if agg.uuid == ref:
            return agg
    named = [agg for agg in aggregates if agg.name == ref]
    if not named:
        raise base.CommandError("no such aggregate: %s" % ref)
    if len(named) > 1:
        raise base.CommandError(
            "%d aggregates are named %s: give a uuid (%s)" % (
                len(named), ref, ", ".join(a.uuid for a in named)))
    return named[0]


def _store(rpc, uuid, name, hosts, metadata):
    return rpc.call("set_aggregate", aggregate_obj.Aggregate(
        uuid=uuid, name=name, hosts=sorted(set(hosts)),
        metadata=dict(metadata)))


def _add_aggregate_argument(parser):
    parser.add_argument("aggregate", metavar="AGGREGATE",
                        help="aggregate uuid or name")


def _add_setting_options(parser, zone_help, property_help):
    """``--zone`` and ``--property KEY=VALUE`` (repeatable)."""
    parser.add_argument("--zone", metavar="AVAILABILITY_ZONE",
                        help=zone_help)
    parser.add_argument("--property", metavar="KEY=VALUE", action="append",
                        help=property_help)


class AggregateList(base.Command, lister.Lister):
    """List the aggregates, their zone, hosts and properties."""

    def take_action(self, parsed_args):
        aggregates = self.rpc.call("get_aggregates")
        return ("UUID", "Name", "Availability Zone", "Hosts",
                "Properties"), [_fields(agg)[1] for agg in aggregates]


class AggregateShow(base.Command, show.ShowOne):
    """Show one aggregate."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_aggregate_argument(parser)
        return parser

    def take_action(self, parsed_args):
        return _fields(find(self.rpc, parsed_args.aggregate))


class AggregateCreate(base.Command, show.ShowOne):
    """Create an aggregate (a uuid is generated unless one is given)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="NAME")
        parser.add_argument("--uuid", help="the aggregate's uuid (default: "
                                           "a new random one)")
        _add_setting_options(parser, "the availability zone of its hosts",
                             "a metadata property (repeat for more)")
        parser.add_argument("--host", action="append", default=[],
                            help="a member host (repeat for more); the "
                                 "scheduler refuses hosts it does not know")
        return parser

    def take_action(self, parsed_args):
        uuid = parsed_args.uuid or str(uuid_mod.uuid4())
        if not uuidutils.is_uuid_like(uuid):
            raise base.CommandError("--uuid: %r is not a uuid" % uuid,
                                    base.REFUSED)
        metadata = base.properties(parsed_args.property)
        if parsed_args.zone:
            metadata[ZONE] = parsed_args.zone
        if any(agg.uuid == uuid for agg in self.rpc.call("get_aggregates")):
            raise base.CommandError("aggregate %s exists: change it with "
                                    "gantt aggregate set" % uuid)
        return _fields(_store(self.rpc, uuid, parsed_args.name,
                              parsed_args.host, metadata))


class AggregateSet(base.Command, command.Command):
    """Change an aggregate's name, zone or properties."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_aggregate_argument(parser)
        parser.add_argument("--name", help="its new name")
        _add_setting_options(parser, "its new availability zone",
                             "set a metadata property (repeat for more)")
        parser.add_argument("--no-property", action="store_true",
                            help="remove every property (but the zone) "
                                 "before setting those of --property")
        return parser

    def take_action(self, parsed_args):
        agg = find(self.rpc, parsed_args.aggregate)
        metadata = dict(agg.metadata)
        if parsed_args.no_property:
            metadata = {k: v for k, v in metadata.items() if k == ZONE}
        metadata.update(base.properties(parsed_args.property))
        if parsed_args.zone:
            metadata[ZONE] = parsed_args.zone
        _store(self.rpc, agg.uuid, parsed_args.name or agg.name, agg.hosts,
               metadata)
        return 0


class AggregateUnset(base.Command, command.Command):
    """Remove properties (or the zone) of an aggregate."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_aggregate_argument(parser)
        parser.add_argument("--property", metavar="KEY", action="append",
                            default=[],
                            help="a property to remove (repeat for more)")
        parser.add_argument("--zone", action="store_true",
                            help="remove its availability zone")
        return parser

    def take_action(self, parsed_args):
        agg = find(self.rpc, parsed_args.aggregate)
        gone = set(parsed_args.property) | ({ZONE} if parsed_args.zone
                                            else set())
        _store(self.rpc, agg.uuid, agg.name, agg.hosts,
               {k: v for k, v in agg.metadata.items() if k not in gone})
        return 0


class _HostChange(base.Command, show.ShowOne):
    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_aggregate_argument(parser)
        parser.add_argument("hosts", metavar="HOST", nargs="+")
        return parser

    def take_action(self, parsed_args):
        agg = find(self.rpc, parsed_args.aggregate)
        hosts = self.changed(set(agg.hosts), set(parsed_args.hosts), agg)
        return _fields(_store(self.rpc, agg.uuid, agg.name, hosts,
                              agg.metadata))


class AggregateAddHost(_HostChange):
    """Add hosts to an aggregate.

    The scheduler refuses hosts it does not know.
    """

    def changed(self, hosts, named, agg):
        return hosts | named


class AggregateRemoveHost(_HostChange):
    """Remove hosts from an aggregate."""

    def changed(self, hosts, named, agg):
        missing = named - hosts
        if missing:
            raise base.CommandError("not in aggregate %s: %s" % (
                agg.name, ", ".join(sorted(missing))))
        return hosts - named


class AggregateDelete(base.Command, command.Command):
    """Delete aggregates."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("aggregates", metavar="AGGREGATE", nargs="+",
                            help="aggregate uuid or name")
        return parser

    def take_action(self, parsed_args):
        missing = []
        for ref in parsed_args.aggregates:
            uuid = ref
            if not uuidutils.is_uuid_like(ref):
                uuid = find(self.rpc, ref).uuid
            if not self.rpc.call("delete_aggregate", uuid):
                missing.append(ref)
        if missing:
            raise base.CommandError("no such aggregate: %s"
                                    % ", ".join(missing))
        return 0


class LegacyAggregateSet(base.Command, command.Command):
    """Create or replace an aggregate whole (deprecated).

    Use aggregate create, set, add host and remove host instead.
    """

    deprecated = True

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("uuid")
        parser.add_argument("name")
        parser.add_argument("--host", action="append", default=[],
                            help="a member host (repeat for more)")
        parser.add_argument("--property", metavar="KEY=VALUE",
                            action="append",
                            help="metadata KEY=VALUE (repeat for more)")
        return parser

    def take_action(self, parsed_args):
        self.app.stderr.write("gantt: aggregate-set is deprecated: use "
                              "gantt aggregate create or aggregate set\n")
        if not uuidutils.is_uuid_like(parsed_args.uuid):
            raise base.CommandError("%r is not a uuid" % parsed_args.uuid,
                                    base.REFUSED)
        _store(self.rpc, parsed_args.uuid, parsed_args.name,
               parsed_args.host, base.properties(parsed_args.property))
        self.app.stdout.write("aggregate %s (%s) set\n" % (
            parsed_args.uuid, parsed_args.name))
        return 0
