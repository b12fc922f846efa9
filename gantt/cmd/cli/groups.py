"""``gantt group-plan``: a holistic group's plan, dry run or reserved."""

from importlib import resources
import json

from cliff import command
import yaml

from gantt import exception
from gantt.cmd import group_file
from gantt.cmd.cli import base

#: the example group file, shipped in the package
EXAMPLE = ("gantt.cmd", "examples/group.yaml")


class GroupPlan(base.Command, command.Command):
    """Show the plan of a group described in a file (nothing claimed);
    with --reserve, claim it (or, for a file saying ``extend: true``,
    add its members to the reserved group)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("group", metavar="GROUP_FILE", nargs="?",
                            help="group file, YAML or JSON (see --example)")
        parser.add_argument("--reserve", action="store_true",
                            help="claim the plan (reserve_group, or "
                                 "extend_group for extend: true)")
        parser.add_argument("-f", "--format",
                            choices=("text", "json", "yaml"),
                            default="text",
                            help="the output format (default text)")
        parser.add_argument("--example", action="store_true",
                            help="print an example group file and exit")
        return parser

    def take_action(self, parsed_args):
        out = self.app.stdout
        if parsed_args.example:
            package, name = EXAMPLE
            out.write(resources.files(package).joinpath(name).read_text())
            return 0
        if not parsed_args.group:
            raise base.CommandError("group-plan needs a group file (an "
                                    "example: gantt group-plan --example)",
                                    base.REFUSED)
        try:
            request, extend = group_file.load(parsed_args.group)
        except (exception.InvalidRequest, OSError) as exc:
            raise base.CommandError(str(exc), base.REFUSED) from None
        method = "plan_group"
        if parsed_args.reserve:
            method = "extend_group" if extend else "reserve_group"
        plan = self.rpc.call(method, request)
        self._write(out, plan, parsed_args.format)
        return 0

    @staticmethod
    def _write(out, plan, fmt):
        data = base.plain(plan.obj_to_dict())
        if fmt == "json":
            out.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        elif fmt == "yaml":
            out.write(yaml.safe_dump(data, default_flow_style=False))
        else:
            out.write("\n".join(plan_lines(plan)) + "\n")


def plan_lines(plan):
    """The GroupPlan as the text ``gantt group-plan`` prints."""
    gap = "" if plan.gap is None else ", gap %.2f%%" % (plan.gap * 100)
    lines = ["Group %s: %d member(s), %s (%s%s, %.1f ms)" % (
        plan.group_uuid, len(plan.slots),
        "RESERVED until %s" % plan.expires_at.isoformat()
        if plan.reserved else "dry run, nothing claimed",
        plan.method, gap, plan.seconds * 1000), "",
        "  %-5s %-12s %-24s %-36s  %s" % ("SLOT", "MEMBER", "HOST",
                                          "RESERVATION", "ALTERNATES")]
    for slot in plan.slots:
        chosen, *alternates = slot.selections
        lines.append("  %-5d %-12s %-24s %-36s  %s" % (
            slot.slot, slot.member, chosen.service_host,
            slot.reservation_uuid or "-",
            ", ".join(a.service_host for a in alternates) or "-"))
    return lines
