"""The flows of ``gantt-demo`` beyond compute, one module each.

``gantt/cmd/demo.py`` is the command: its options, the bus
(:mod:`gantt.cmd.demo_bus`), the daemon it starts
(:mod:`gantt.cmd.demo_daemons`: ``gantt-scheduler`` with a config of its
own, or its worker in-process on the fake transport) and the order the
flows run in (``--flow``; ``all`` plays them in the order of ``demo.FLOWS`` on
one daemon). Each flow is a module of this package with the same shape,
so that a reader finds one story per file:

* ``PROFILE``: the scheduling profile the flow adds (listed in
  ``[scheduler] profiles``), or None for the default profile;
* ``config(topic)``: what the flow adds to the daemon's config (its
  profile's group, its notifications), as ``{section: text}``;
* ``run(ctx) -> bool``: the flow itself, which prints what happens as it
  goes and ends with its own summary and a ``result`` line (True: OK).

:mod:`.compute`
    The README's story: compute agents, conductors asking for instances
    of mixed flavors, failed builds re-claimed on the alternates.
:mod:`.containers`
    Container hosts (``kind=container``, linked to Nova instances Gantt
    placed) filled one after another; "every instance is full" answered
    by creating an instance; vacant instances announced and retired.
:mod:`.volumes`
    Volume pools (``kind=volume``) with thin provisioning, volumes of a
    few volume types placed by Cinder's filters and weighers, some
    deleted.

This module holds what the flows share: :class:`Context` (what a flow
gets from the command) and small printing helpers.
"""

import dataclasses
import sys
import time


@dataclasses.dataclass(frozen=True)
class Context:
    """What a flow gets: the client, the daemon's config and database."""
    client: object          # a SchedulerClient on the daemon's topic
    transport: object       # its oslo.messaging transport
    notifications: object   # the notification transport on its bus
    conf: object            # the daemon's config, parsed
    db_url: str
    rng: object             # random.Random, seeded by --seed
    args: object            # the parsed command line
    topic: str


def merge_config(*fragments):
    """One ``{section: text}`` from several flows' ``config()``."""
    merged = {}
    for fragment in fragments:
        for section, text in fragment.items():
            merged[section] = merged.get(section, "") + text
    return merged


def reason_key(reason):
    """A NoValidHost message without the host counts' prefix."""
    reason = reason.split("\n")[0]
    marker = "available: "
    return reason.split(marker, 1)[1] if marker in reason else reason


def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100.0 * len(values)))]


def say(text):
    """One line of what happened, at once (the output may be a pipe)."""
    print("  " + text, flush=True)


class Progress:
    """``label  [####    ]  done/total  details``: redrawn on a
    terminal, a line every ``every`` steps in a log."""

    def __init__(self, label, total, every=20):
        self.label, self.total, self.every = label, total, every
        self.tty = sys.stdout.isatty()
        self.started = time.monotonic()

    def step(self, done, details=""):
        if not self.tty and done % self.every and done != self.total:
            return
        bar = "#" * int(20 * done / max(self.total, 1))
        print("%s  %-10s [%-20s] %4d/%d  %s" % (
            "\r" if self.tty else "", self.label, bar, done, self.total,
            details), end="" if self.tty else "\n", flush=True)
        if self.tty and done == self.total:
            print()


def wait_until(predicate, timeout, interval=0.2):
    """Call ``predicate`` until it returns something true (returned), or
    None after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found or time.monotonic() >= deadline:
            return found or None
        time.sleep(interval)
