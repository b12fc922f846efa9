"""``gantt explain`` (a dry run of a request spec) and ``gantt stats
show`` (the counters of the worker that answers)."""

import argparse
from importlib import resources
import json

from cliff import command
from cliff import show
import yaml

from gantt import exception
from gantt.cmd import spec_file
from gantt.cmd.cli import base

#: the example request spec, shipped in the package
EXAMPLE = ("gantt.cmd", "examples/explain-request.yaml")


def example_text():
    """The example request spec file, as shipped."""
    package, name = EXAMPLE
    return resources.files(package).joinpath(name).read_text()


class StatsShow(base.Command, show.ShowOne):
    """Show the counters of the worker that answers.

    Requests, NoValidHost, eliminations per filter, report ages…
    """

    def take_action(self, parsed_args):
        fields = self.rpc.call("get_statistics").obj_to_dict()
        names = sorted(fields)
        return names, [base.plain(fields[n]) for n in names]


class Explain(base.Command, command.Command):
    """Dry-run a request spec: what each filter removes, how hosts weigh.

    Nothing is claimed.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("spec", metavar="SPEC_FILE", nargs="?",
                            help="request spec file, YAML or JSON (see "
                                 "--example)")
        parser.add_argument("--limit", type=int, default=10,
                            help="how many of the best hosts to show "
                                 "(default 10)")
        parser.add_argument("-f", "--format", choices=("text", "json",
                                                       "yaml"),
                            default="text",
                            help="the output format (default text)")
        parser.add_argument("--json", dest="format", action="store_const",
                            const="json", help=argparse.SUPPRESS)
        parser.add_argument("--example", action="store_true",
                            help="print an example request spec file and "
                                 "exit")
        return parser

    def take_action(self, parsed_args):
        out = self.app.stdout
        if parsed_args.example:
            out.write(example_text())
            return 0
        if not parsed_args.spec:
            raise base.CommandError("explain needs a request spec file (an "
                                    "example: gantt explain --example)",
                                    base.REFUSED)
        try:
            spec = spec_file.load(parsed_args.spec)
        except (exception.InvalidRequest, OSError) as exc:
            raise base.CommandError(str(exc), base.REFUSED) from None
        result = self.rpc.call("explain", spec, limit=parsed_args.limit)
        if parsed_args.format == "json":
            out.write(json.dumps(result.obj_to_dict(), indent=2,
                                 sort_keys=True) + "\n")
        elif parsed_args.format == "yaml":
            out.write(yaml.safe_dump(result.obj_to_dict(),
                                     default_flow_style=False))
        else:
            out.write("\n".join(explanation_lines(result)) + "\n")
        return 0


def explanation_lines(result):
    """The Explanation as the text ``gantt explain`` prints."""
    lines = [result.summary, "", "Request: %s" % ", ".join(
        "%s=%d" % kv for kv in sorted(result.resources.items())),
        "Filters: %s" % ", ".join(result.filters)]
    if result.obj_attr_is_set("profile"):
        # an older worker (Explanation 1.0) does not say
        lines.append("Profile: %s, packing: %s" % (
            result.profile, result.packing or "none (weighers as "
            "configured)"))
    lines += ["", "Removed (%d hosts considered, %d left):" % (
        result.considered, result.passed)]
    if not result.steps:
        lines.append("  nothing")
    for step in result.steps:
        more = step.removed - len(step.hosts)
        lines.append("  %-10s %-34s %6d  %s" % (step.stage, step.name,
                                                step.removed, step.reason))
        lines.append("  %-10s %-34s %6s  %s%s" % (
            "", "", "", ", ".join(step.hosts),
            " (+%d more)" % more if more > 0 else ""))
    return lines + _weighed_lines(result)


def _weighed_lines(result):
    if not result.weighed:
        return []
    names = [w for w in result.weighers
             if any(h.weights.get(w) for h in result.weighed)]
    lines = ["", "Best %d of %d hosts (weight = sum of multiplier x "
             "normalised value; weighers that added nothing are left out):"
             % (len(result.weighed), result.passed),
             "  %-4s %-24s %10s  %s" % ("RANK", "HOST", "WEIGHT", "  ".join(
                 "%12s" % w.replace("Weigher", "")[:12] for w in names))]
    for rank, host in enumerate(result.weighed, 1):
        lines.append("  %-4d %-24s %10.4f  %s" % (
            rank, host.host, host.weight, "  ".join(
                "%12.4f" % host.weights.get(w, 0.0) for w in names)))
    return lines
