"""Workloads: the create and delete events a simulation replays.

A workload is a list of :class:`Event` in time order, from one of:

* :func:`generate`: seeded. Instances arrive one per unit of time on
  average (exponential gaps), their flavors drawn from a weighted mix,
  each living an exponential time of mean ``mean_lifetime`` (so about
  ``mean_lifetime`` instances are alive at steady state: churn), or for
  ever when it is 0 (fill from empty). ``initial`` instances arrive at
  time 0 first, with the same lifetimes: the fleet starts at its steady
  population instead of climbing to it. The workload ends with its last
  arrival (later deletions would only drain the fleet).
* :func:`load_trace`: a file of events, CSV or JSON Lines::

      time,event,instance,flavor
      0.0,create,web-1,m1.small
      5.5,delete,web-1,

  (JSON Lines: ``{"time": 0.0, "event": "create", "instance": "web-1",
  "flavor": "m1.small"}`` per line.) Events are replayed in time order,
  ties in file order; ``flavor`` names one of the flavor mix.

The flavor mix is a YAML file (:func:`load_workload`) or
:data:`DEFAULT_MIX`.
"""

import csv
import dataclasses
import json
import random
import typing

from gantt.simulate import inputs


@dataclasses.dataclass(frozen=True)
class Flavor:
    """What one instance asks for (local disk is root + ephemeral)."""

    name: str
    vcpus: int
    memory_mb: int
    disk_gb: int

    @property
    def amounts(self):
        return {"VCPU": self.vcpus, "MEMORY_MB": self.memory_mb,
                "DISK_GB": self.disk_gb}


class Event(typing.NamedTuple):
    time: float
    kind: str            # "create" or "delete"
    instance: str
    flavor: typing.Optional[Flavor]


@dataclasses.dataclass(frozen=True)
class Generator:
    """The parameters of a generated workload.

    :attr mix: ``((Flavor, weight), ...)``
    """

    mix: tuple
    arrivals: int
    mean_lifetime: float = 0.0
    initial: int = 0
    seed: int = 7


M1 = (Flavor("m1.small", 1, 2048, 20), Flavor("m1.medium", 2, 4096, 40),
      Flavor("m1.large", 4, 8192, 80), Flavor("m1.xlarge", 8, 16384, 160))
SKEWED = (Flavor("c1.xlarge", 16, 8192, 40),     # CPU-heavy
          Flavor("r1.xlarge", 4, 65536, 40),     # RAM-heavy
          Flavor("d1.large", 2, 4096, 800))      # disk-heavy
#: m1.small to m1.xlarge, 73 %, and a CPU-, RAM- and disk-heavy flavor
DEFAULT_MIX = tuple(zip(M1 + SKEWED, (25, 25, 15, 8, 9, 9, 9), strict=True))


def generate(gen):
    """The events of ``gen``, in time order, seeded."""
    rng = random.Random(gen.seed)
    flavors, weights = zip(*gen.mix, strict=True)
    events, now = [], 0.0
    for i in range(gen.initial + gen.arrivals):
        if i >= gen.initial:
            now += rng.expovariate(1.0)
        flavor = rng.choices(flavors, weights)[0]
        name = "i%d" % i
        events.append(Event(now, "create", name, flavor))
        if gen.mean_lifetime > 0:
            end = now + rng.expovariate(1.0 / gen.mean_lifetime)
            events.append(Event(end, "delete", name, None))
    # stable: a create at the same time as a delete keeps its order
    events.sort(key=lambda e: e.time)
    return [e for e in events if e.time <= now]


def scale_mix(mix, factors):
    """``mix`` with some flavors' weights multiplied ("this flavor grows
    30 %": ``{"r1.xlarge": 1.3}``).

    :raises: KeyError naming a flavor not in the mix
    """
    names = {f.name for f, _w in mix}
    for name in factors:
        if name not in names:
            raise KeyError("flavor %r is not in the mix (%s)"
                           % (name, ", ".join(sorted(names))))
    return tuple((f, w * factors.get(f.name, 1.0)) for f, w in mix)


_WORKLOAD_KEYS = ("seed", "arrivals", "mean_lifetime", "initial", "flavors")
_FLAVOR_KEYS = ("name", "vcpus", "memory_mb", "disk_gb", "weight")


def load_workload(path):
    """A :class:`Generator` from a YAML file::

        seed: 7
        arrivals: 20000          # instances created after time 0
        mean_lifetime: 4000      # 0: never deleted
        initial: 4000            # created at time 0
        flavors:
          - {name: m1.small, vcpus: 1, memory_mb: 2048, disk_gb: 20,
             weight: 25}

    :raises: InputError
    """
    doc = inputs.Fields(path, inputs.load_yaml(path), "workload")
    doc.check_known(_WORKLOAD_KEYS)
    raw = doc.mapping.get("flavors")
    if raw is None:
        mix = DEFAULT_MIX
    elif isinstance(raw, list) and raw:
        mix = tuple(_flavor(path, item) for item in raw)
    else:
        raise doc.error("'flavors' must be a non-empty list")
    _unique(path, doc, [f.name for f, _w in mix])
    return Generator(
        mix=mix, arrivals=doc.number("arrivals", kind=int, minimum=1),
        mean_lifetime=doc.number("mean_lifetime", 0.0),
        initial=doc.number("initial", 0, kind=int),
        seed=doc.number("seed", 7, kind=int))


def _flavor(path, item):
    fields = inputs.Fields(path, item, "flavor")
    fields.check_known(_FLAVOR_KEYS)
    flavor = Flavor(fields.text("name"), fields.number("vcpus", kind=int),
                    fields.number("memory_mb", kind=int),
                    fields.number("disk_gb", 0, kind=int))
    weight = fields.number("weight", 1.0)
    if weight <= 0 or not (flavor.vcpus or flavor.memory_mb
                           or flavor.disk_gb):
        raise fields.error("%s: a flavor needs a positive weight and "
                           "asks for something" % flavor.name)
    return flavor, weight


def _unique(path, doc, names):
    seen = set()
    for name in names:
        if name in seen:
            raise doc.error("flavor %r is listed twice" % name)
        seen.add(name)


def load_trace(path, flavors):
    """The events of a trace file (CSV, or JSON Lines when its name ends
    in ``.json`` or ``.jsonl``), in time order.

    :param flavors: ``{name: Flavor}`` the creates may name
    :raises: InputError naming the line
    """
    try:
        with open(path, encoding="utf-8", newline="") as f:
            if str(path).endswith((".json", ".jsonl")):
                rows = list(_json_rows(path, f))
            else:
                rows = list(_csv_rows(path, f))
    except OSError as exc:
        raise inputs.InputError(path, None,
                                exc.strerror or str(exc)) from None
    events = [_event(path, line, row, flavors) for line, row in rows]
    _check_lives(path, rows, events)
    order = sorted(range(len(events)), key=lambda i: events[i].time)
    return [events[i] for i in order]


_TRACE_COLUMNS = ("time", "event", "instance", "flavor")


def _csv_rows(path, f):
    reader = csv.DictReader(f)
    missing = [c for c in _TRACE_COLUMNS[:3]
               if c not in (reader.fieldnames or ())]
    if missing:
        raise inputs.InputError(path, 1, "the header must name the columns "
                                "%s; missing %s" % (",".join(_TRACE_COLUMNS),
                                                    ",".join(missing)))
    for row in reader:
        yield reader.line_num, row


def _json_rows(path, f):
    for line, text in enumerate(f, 1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except ValueError as exc:
            raise inputs.InputError(path, line,
                                    "not a JSON object: %s" % exc) from None
        if not isinstance(row, dict):
            raise inputs.InputError(path, line, "not a JSON object")
        yield line, row


def _event(path, line, row, flavors):
    def error(message):
        return inputs.InputError(path, line, message)

    try:
        time = float(row.get("time"))
    except (TypeError, ValueError):
        raise error("time must be a number, not %r"
                    % (row.get("time"),)) from None
    kind, instance = row.get("event"), row.get("instance")
    if kind not in ("create", "delete"):
        raise error("event must be create or delete, not %r" % (kind,))
    if not instance or not isinstance(instance, str):
        raise error("instance must be a non-empty name")
    if kind == "delete":
        return Event(time, kind, instance, None)
    name = row.get("flavor")
    if name not in flavors:
        raise error("unknown flavor %r (known: %s)"
                    % (name, ", ".join(sorted(flavors))))
    return Event(time, kind, instance, flavors[name])


def _check_lives(path, rows, events):
    """Each instance is created once, and deleted after its creation."""
    born = {}
    for (line, _row), event in zip(rows, events, strict=True):
        if event.kind == "create":
            if event.instance in born:
                raise inputs.InputError(path, line, "instance %r is created "
                                        "twice" % event.instance)
            born[event.instance] = event.time
        elif born.get(event.instance, float("inf")) > event.time:
            raise inputs.InputError(path, line, "instance %r is deleted "
                                    "before it is created" % event.instance)
