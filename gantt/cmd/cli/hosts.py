"""``gantt host list`` and ``gantt host show``: hosts as the scheduler
sees them, compute nodes and standalone providers (volume backends,
network nodes, container hosts…) alike, each with its kind; ``gantt host
retire``: a vacant standalone provider retired at its generation.

A host's zone is the one the AvailabilityZoneFilter uses: the
``availability_zone`` metadata of the aggregates it is in, else the zone
its agent reports.
"""

from cliff import command
from cliff import lister
from cliff import show

from gantt import zones
from gantt.cmd.cli import base

#: (resource class, column title) of the usage ``host list`` shows
_USAGE = (("VCPU", "vCPUs"), ("MEMORY_MB", "Memory MB"),
          ("DISK_GB", "Disk GB"))
_COLUMNS = ("Host", "Zone", "State", "Status") + tuple(
    title for _rc, name in _USAGE for title in (name + " Used", name))
_LONG_COLUMNS = ("UUID", "Node", "Cell", "Aggregates", "Instances",
                 "Kind", "Service", "Vacant")


def _zone_table(rpc, stderr):
    """``{aggregate uuid: its availability_zone}``; None when the version
    cap forbids reading aggregates (zones are then the reported ones)."""
    if not rpc.can_send_version("1.2"):
        stderr.write("gantt: [upgrade_levels] scheduler forbids reading "
                     "aggregates: zones shown are those the hosts report\n")
        return None
    return {agg.uuid: agg.metadata[zones.KEY]
            for agg in rpc.call("get_aggregates")
            if zones.KEY in agg.metadata}


def _zone(state, zone_table):
    """The host's zone(s), comma-separated; None when it has none."""
    in_aggregates = [zone_table[u] for u in state.aggregates
                     if u in (zone_table or {})]
    found = zones.zones_of(in_aggregates, state.availability_zone)
    return ", ".join(sorted(found)) or None


def _usage(state):
    """``[used, capacity]`` per resource class of _USAGE (None if absent);
    capacity is what can be allocated: (total - reserved) x ratio."""
    by_class = {r.resource_class: r for r in state.resources}
    out = []
    for rc, _name in _USAGE:
        usage = by_class.get(rc)
        out += [None, None] if usage is None else [
            usage.used, usage.used + usage.free]
    return out


def _row(state, zone_table, long):
    row = [state.host, _zone(state, zone_table),
           "up" if state.up else "down",
           "disabled" if state.disabled else "enabled"] + _usage(state)
    if long:
        row += [state.uuid, state.nodename, state.cell_uuid,
                base.ListColumn(state.aggregates), state.num_instances,
                state.kind, state.service, state.vacant]
    return row


class HostList(base.Command, lister.Lister):
    """List the hosts the scheduler knows, with their zone and usage."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--cell", metavar="UUID",
                            help="only the hosts of this cell")
        parser.add_argument("--long", action="store_true",
                            help="also the provider uuid, node, cell, "
                                 "aggregates, instance count, kind, "
                                 "service and vacancy")
        parser.add_argument("--kind", metavar="KIND", action="append",
                            help="only providers of this kind (compute, "
                                 "volume, network, container…); "
                                 "repeatable")
        parser.add_argument("--vacant", action="store_true",
                            help="only vacant providers: of a kind in "
                                 "[scheduler] vacancy_kinds, with nothing "
                                 "allocated (their owners may retire them)")
        return parser

    def take_action(self, parsed_args):
        if (parsed_args.kind or parsed_args.vacant) and not (
                self.rpc.can_send_version("1.9")):
            raise base.CommandError(
                "--kind and --vacant need RPC API 1.9, which [upgrade_levels]"
                " scheduler forbids")
        states = self.rpc.call("get_host_states")
        if parsed_args.cell:
            states = [s for s in states if s.cell_uuid == parsed_args.cell]
        if parsed_args.kind:
            states = [s for s in states if s.kind in parsed_args.kind]
        if parsed_args.vacant:
            states = [s for s in states if s.vacant]
        zones = _zone_table(self.rpc, self.app.stderr)
        names = _COLUMNS + (_LONG_COLUMNS if parsed_args.long else ())
        return names, [_row(s, zones, parsed_args.long)
                       for s in sorted(states, key=lambda s: s.host)]


class ResourcesColumn(base.DictColumn):
    """Per resource class its inventory and usage."""

    def human_readable(self):
        return "\n".join(
            "%s: %d used of %d (total %d, reserved %d, ratio %g)" % (
                rc, r["used"], r["used"] + r["free"], r["total"],
                r["reserved"], r["allocation_ratio"])
            for rc, r in sorted(self._value.items()))


def _details(state, zone_table):
    fields = state.obj_to_dict()
    resources = {r.pop("resource_class"): r
                 for r in fields.pop("resources")}
    fields["reported_availability_zone"] = fields.pop("availability_zone")
    fields["availability_zone"] = _zone(state, zone_table)
    fields["resources"] = ResourcesColumn(resources)
    return {key: base.plain(value) for key, value in fields.items()}


class HostShow(base.Command, show.ShowOne):
    """Show one host (or node) as the scheduler sees it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("host",
                            help="host name or provider uuid")
        return parser

    def take_action(self, parsed_args):
        states = self.rpc.call("get_host_states", hosts=[parsed_args.host])
        if not states:
            raise base.CommandError("no such host: %s" % parsed_args.host)
        if len(states) > 1:
            raise base.CommandError(
                "%s names %d nodes: give one of their uuids (%s)" % (
                    parsed_args.host, len(states),
                    ", ".join(sorted(s.uuid for s in states))))
        fields = _details(states[0], _zone_table(self.rpc, self.app.stderr))
        names = sorted(fields)
        return names, [fields[n] for n in names]


class HostRetire(base.Command, command.Command):
    """Retire a vacant standalone provider (a container host…) at the
    generation it was vacant at; refused if anything changed since."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("provider", metavar="UUID",
                            help="the standalone provider's uuid")
        parser.add_argument("--generation", type=int, required=True,
                            help="its generation when vacant (host show "
                                 "or the provider.vacant notification)")
        return parser

    def take_action(self, parsed_args):
        self.rpc.call("retire_provider", parsed_args.provider,
                      parsed_args.generation)
        return 0
