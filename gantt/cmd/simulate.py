"""gantt-simulate: replay a workload on a fleet under packing policies.

Everything runs in this process on Gantt's real engine and claims (see
:mod:`gantt.simulate`); no daemon, broker or shared database is touched
(``--from-live`` only reads a running scheduler's host states).
Exit status: 0 done, 2 bad input (one line on stderr, no traceback).
"""

import argparse
import logging
import os
import sys
import time

from oslo_config import cfg

from gantt import exception
from gantt import version
from gantt.cmd import common
from gantt.simulate import fleet as fleet_mod
from gantt.simulate import inputs
from gantt.simulate import plots
from gantt.simulate import replay
from gantt.simulate import report
from gantt.simulate import workload

LOG = logging.getLogger("gantt.simulate")

EPILOG = """\
a what-if, step by step:

  1. describe the fleet (host shapes with counts, ratios, reserved):
       gantt-simulate --example-fleet > fleet.yaml
     or take a running Gantt's hosts, with what they hold now:
       gantt-simulate --from-live /etc/gantt/gantt.conf ...

  2. run today's policy on a generated workload with churn: 4000
     instances at first, 8000 more arriving, each living 4000 arrivals
     on average (about ten seconds on 200 hosts in --mode memory):
       gantt-simulate --fleet fleet.yaml --arrivals 8000 \\
           --mean-lifetime 4000 --initial 4000 --mode memory \\
           --plot today.png

  3. ask the question, policies side by side:
       how many more instances with another policy?
         ... --policy spread --policy balanced+stack
       my own gantt.conf's weighers against a named policy?
         ... --config /etc/gantt/gantt.conf --policy balanced+stack
       what if I buy 20 more RAM-rich hosts?
         ... --add-hosts 20xram-rich
       what if RAM-heavy instances grow 30 %%?
         ... --scale-flavor r1.xlarge=1.3

  4. read the table (placed, refused and why, held, used and stranded
     per class, fill per host shape) and the plot.

The workload can also be a YAML file (--workload, see --example-workload)
or a trace of create/delete events (--trace, CSV or JSON Lines).
Large fleets: --mode memory keeps claims in memory (same decisions, no
SQL cost). Policies: %(policies)s
(see doc/source/admin/packing.rst and simulate.rst).
"""

EXAMPLE_FLEET = os.path.join(os.path.dirname(__file__), "examples",
                             "simulate-fleet.yaml")


def _example_workload():
    lines = ["# gantt-simulate workload: generated, seeded",
             "seed: 7", "arrivals: 20000", "mean_lifetime: 4000",
             "initial: 4000", "flavors:"]
    lines += ["  - {name: %s, vcpus: %d, memory_mb: %d, disk_gb: %d, "
              "weight: %g}" % (f.name, f.vcpus, f.memory_mb, f.disk_gb, w)
              for f, w in workload.DEFAULT_MIX]
    return "\n".join(lines) + "\n"


def parser():
    p = argparse.ArgumentParser(
        prog="gantt-simulate",
        description="Replay a workload of creates and deletes on a fleet\n"
                    "with Gantt's real engine, under one or more packing\n"
                    "policies side by side; report what each placed,\n"
                    "refused and left stranded, and plot it.",
        epilog=EPILOG % {"policies": ", ".join(replay.policy_names())},
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_argument_group("fleet")
    where.add_argument("--fleet", metavar="YAML",
                       help="host shapes with counts (--example-fleet)")
    where.add_argument("--from-live", metavar="GANTT_CONF",
                       help="a running Gantt's hosts and their usage, read "
                            "with this config's transport_url")
    where.add_argument("--add-hosts", metavar="COUNTxSHAPE",
                       action="append", default=[],
                       help="what if: more hosts of a shape, e.g. "
                            "20xram-rich (repeatable)")
    what = p.add_argument_group("workload (default: generated, the "
                                "built-in flavor mix)")
    what.add_argument("--workload", metavar="YAML",
                      help="generator settings and flavor mix "
                           "(--example-workload)")
    what.add_argument("--trace", metavar="FILE",
                      help="create/delete events, CSV (time,event,"
                           "instance,flavor) or JSON Lines; flavors from "
                           "--workload or the built-in mix")
    what.add_argument("--arrivals", type=int, metavar="N",
                      help="instances created (default 10000)")
    what.add_argument("--mean-lifetime", type=float, metavar="T",
                      help="mean lifetime in arrivals; 0: never deleted "
                           "(default 0)")
    what.add_argument("--initial", type=int, metavar="N",
                      help="instances created at time 0 (default 0)")
    what.add_argument("--seed", type=int, metavar="S")
    what.add_argument("--scale-flavor", metavar="NAME=FACTOR",
                      action="append", default=[],
                      help="what if: a flavor's share of arrivals times "
                           "FACTOR, e.g. r1.xlarge=1.3 (repeatable)")
    how = p.add_argument_group("policies and engine")
    how.add_argument("--policy", action="append", default=[],
                     choices=replay.policy_names(), metavar="NAME",
                     help="a packing policy (repeatable; default: Gantt's "
                          "default profile, packing balanced+stack)")
    how.add_argument("--config", action="append", default=[],
                     metavar="GANTT_CONF",
                     help="an operator's gantt.conf: its filters and "
                          "weighers as one more policy (repeatable)")
    how.add_argument("--mode", choices=replay.MODES, default="sqlite",
                     help="claims in a SQLite file (default) or in memory "
                          "(faster, same decisions)")
    how.add_argument("--database", metavar="URL",
                     help="keep the claims in this database (one policy)")
    out = p.add_argument_group("output")
    out.add_argument("--plot", metavar="FILE.png|FILE.svg",
                     help="draw utilisation, stranded capacity and fill "
                          "per host shape (needs matplotlib)")
    out.add_argument("--csv", metavar="FILE",
                     help="write each policy's utilisation and stranded "
                          "share per class over time as CSV")
    out.add_argument("--samples", type=int, default=200,
                     help="measurements per run (default 200)")
    out.add_argument("--quiet", action="store_true",
                     help="no progress or log lines")
    out.add_argument("--example-fleet", action="store_true",
                     help="print an example fleet file and exit")
    out.add_argument("--example-workload", action="store_true",
                     help="print an example workload file and exit")
    out.add_argument("--version", action="version",
                     version=version.version_info.version_string_with_package())
    return p


class UsageError(Exception):
    """A command line the simulator cannot run."""


def _fleet(args):
    if bool(args.fleet) == bool(args.from_live):
        raise UsageError("give one of --fleet or --from-live")
    fleet = (fleet_mod.load_fleet(args.fleet) if args.fleet
             else _live_fleet(args.from_live))
    for text in args.add_hosts:
        try:
            count, shape = fleet_mod.parse_addition(text)
            fleet = fleet.add(count, shape)
        except (KeyError, ValueError) as exc:
            raise UsageError("--add-hosts %s" % exc.args[0]) from None
        LOG.info("What if: %d more %s hosts", count, shape)
    return fleet


def _live_fleet(config_file):
    from gantt.cmd.cli import base
    try:
        rpc = base.Rpc(base.load_conf([config_file], []), 30.0)
        try:
            states = rpc.call("get_host_states")
        finally:
            rpc.close()
    except base.CommandError as exc:
        raise UsageError("--from-live: %s" % exc) from None
    LOG.info("Read %d hosts from the running scheduler", len(states))
    return fleet_mod.from_host_states(states)


def _generator(args):
    gen = (workload.load_workload(args.workload) if args.workload
           else workload.Generator(mix=workload.DEFAULT_MIX, arrivals=10000))
    changes = {k: v for k, v in (("arrivals", args.arrivals),
                                 ("mean_lifetime", args.mean_lifetime),
                                 ("initial", args.initial),
                                 ("seed", args.seed)) if v is not None}
    if any(v < 0 for v in changes.values()):
        raise UsageError("--arrivals, --mean-lifetime, --initial and "
                         "--seed cannot be negative")
    gen = workload.Generator(**{**gen.__dict__, **changes})
    factors = {}
    for text in args.scale_flavor:
        name, _sep, factor = text.partition("=")
        try:
            factors[name] = float(factor)
        except ValueError:
            raise UsageError("--scale-flavor %r: expected NAME=FACTOR, "
                             "e.g. r1.xlarge=1.3" % text) from None
    try:
        return workload.Generator(**{**gen.__dict__, "mix": workload.
                                     scale_mix(gen.mix, factors)})
    except KeyError as exc:
        raise UsageError("--scale-flavor: %s" % exc.args[0]) from None


def _events(args):
    gen = _generator(args)
    if not args.trace:
        LOG.info("Workload: %d arrivals (+%d at time 0), mean lifetime %g, "
                 "seed %d", gen.arrivals, gen.initial, gen.mean_lifetime,
                 gen.seed)
        return workload.generate(gen)
    if args.scale_flavor or any(v is not None for v in (
            args.arrivals, args.mean_lifetime, args.initial, args.seed)):
        raise UsageError("--scale-flavor, --arrivals, --mean-lifetime, "
                         "--initial and --seed shape a generated workload, "
                         "not a --trace")
    events = workload.load_trace(args.trace, {f.name: f for f, _w
                                              in gen.mix})
    LOG.info("Trace %s: %d events", args.trace, len(events))
    return events


def _runs(args):
    """``[(label, conf)]`` of the policies to compare."""
    runs = []
    for path in args.config:
        try:
            conf = replay.make_conf(None, config_file=path)
            # every value readable now, not half-way through a run
            common.check_values(conf)
        except (cfg.Error, exception.ConfigurationError) as exc:
            raise UsageError("--config %s: %s" % (path, exc)) from None
        runs.append((os.path.basename(path), conf))
    runs += [(name, replay.make_conf(name)) for name in args.policy]
    if not runs:
        # what a fresh install schedules by: the default profile
        conf = replay.make_conf(None)
        runs = [("default (%s)" % (conf.filter_scheduler.packing
                                   or "Nova's weighers"), conf)]
    if args.database and len(runs) > 1:
        raise UsageError("--database keeps one policy's claims: give one "
                         "policy")
    return runs


class Progress:
    """One line on stderr, rewritten, when it is a terminal; else a log
    line each tenth of the run."""

    def __init__(self, label, quiet):
        self.label = label
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic()
        self.shown = -1

    def __call__(self, done, total):
        if self.quiet:
            return
        tenth = 10 * done // total
        if self.tty:
            sys.stderr.write("\r%s: %d/%d events, %.0f s" % (
                self.label, done, total, time.monotonic() - self.started))
            if done == total:
                sys.stderr.write("\n")
        elif tenth != self.shown:
            self.shown = tenth
            LOG.info("%s: %d/%d events", self.label, done, total)


def simulate(args):
    if args.plot:
        try:
            plots.check(args.plot)
        except plots.PlotsUnavailable as exc:
            raise UsageError(str(exc)) from None
    runs = _runs(args)
    fleet = _fleet(args)
    events = _events(args)
    LOG.info("Fleet: %d hosts (%s)", len(fleet.hosts), ", ".join(
        "%d %s" % (n, s) for s, n in fleet.shapes().items()))
    results = []
    for label, conf in runs:
        result = replay.replay(
            fleet, events, label, conf=conf, mode=args.mode,
            db_url=args.database, samples=args.samples,
            progress=Progress(label, args.quiet))
        LOG.info("%s: placed %d, refused %d in %.1f s", label,
                 result.placed, result.refused, result.seconds)
        results.append(result)
    for rows in (report.summary(results), report.refusals(results),
                 report.shape_fill(fleet, results)):
        if rows:
            print(report.render(rows) + "\n")
    if args.csv:
        report.write_samples(args.csv, results)
        print("samples: %s" % args.csv)
    if args.plot:
        plots.draw(args.plot, fleet, results)
        print("plot: %s" % args.plot)
    return 0


def main(argv=None):
    args = parser().parse_args(argv)
    if args.example_fleet or args.example_workload:
        if args.example_fleet:
            with open(EXAMPLE_FLEET, encoding="utf-8") as f:
                sys.stdout.write(f.read())
        else:
            sys.stdout.write(_example_workload())
        return 0
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # the engine logs each placement at INFO: keep it to warnings
    LOG.setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        return simulate(args)
    except (UsageError, inputs.InputError, OSError) as exc:
        print("gantt-simulate: %s" % exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
