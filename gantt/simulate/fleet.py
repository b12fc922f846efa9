"""Fleets: the hosts a simulation places on.

A fleet is host shapes with counts, read from YAML (:func:`load_fleet`):
``shapes``, a list of ``name``, ``count``, ``vcpus`` (physical cores),
``memory_mb`` and ``disk_gb`` (0: boot from volume only), each with any of
the ``defaults`` (allocation ratios and reserved amounts, :data:`DEFAULTS`)
set for it alone; and ``defaults``, to change them for every shape. The
example is ``gantt/cmd/examples/simulate-fleet.yaml``
(``gantt-simulate --example-fleet``); ``doc/source/admin/simulate.rst``
describes the format. Hosts are numbered in file order, shape by shape:
that order is first-fit's.

A fleet can also be a running Gantt's host states
(:func:`from_host_states`), each host with what it already holds.
"""

import collections
import dataclasses
import re
import typing
import uuid

from gantt.simulate import inputs

CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")
_RATIOS = {"VCPU": "cpu_allocation_ratio", "MEMORY_MB": "ram_allocation_ratio",
           "DISK_GB": "disk_allocation_ratio"}
_RESERVED = {"MEMORY_MB": "reserved_host_memory_mb",
             "DISK_GB": "reserved_host_disk_gb"}
DEFAULTS = {"cpu_allocation_ratio": 4.0, "ram_allocation_ratio": 1.0,
            "disk_allocation_ratio": 1.0, "reserved_host_memory_mb": 4096,
            "reserved_host_disk_gb": 0}


@dataclasses.dataclass(frozen=True)
class Shape:
    """A host model: per class ``(total, reserved, allocation ratio)``."""

    name: str
    inventory: typing.Mapping  # class -> (total, reserved, ratio)

    def capacity(self, resource_class):
        """What placement may allocate of a class: (total - reserved) x
        ratio."""
        total, reserved, ratio = self.inventory[resource_class]
        return (total - reserved) * ratio


class Host(typing.NamedTuple):
    name: str
    shape: Shape
    #: class -> amount held before the simulation starts (live fleets)
    held: typing.Mapping = {}


@dataclasses.dataclass(frozen=True)
class Fleet:
    hosts: tuple

    def shapes(self):
        """``{shape name: number of hosts}``, in order."""
        return dict(collections.Counter(h.shape.name for h in self.hosts))

    def shape(self, name):
        for host in self.hosts:
            if host.shape.name == name:
                return host.shape
        raise KeyError("no host shape %r in the fleet (%s)"
                       % (name, ", ".join(self.shapes())))

    def add(self, count, shape_name):
        """The fleet with ``count`` more hosts of a shape it has (what if
        I buy 20 more RAM-rich hosts?)."""
        shape = self.shape(shape_name)
        start = len(self.hosts)
        extra = tuple(Host("%s-added-%d" % (shape.name, start + i), shape)
                      for i in range(count))
        return Fleet(self.hosts + extra)


_SHAPE_KEYS = ("name", "count", "vcpus", "memory_mb", "disk_gb") + tuple(
    DEFAULTS)


def load_fleet(path):
    """A :class:`Fleet` from a YAML file.

    :raises: InputError naming the line
    """
    doc = inputs.Fields(path, inputs.load_yaml(path), "fleet")
    doc.check_known(("defaults", "shapes"))
    defaults = dict(DEFAULTS)
    if "defaults" in doc.mapping:
        given = inputs.Fields(path, doc.mapping["defaults"], "defaults")
        given.check_known(tuple(DEFAULTS))
        defaults.update({k: given.number(k) for k in given.mapping
                         if k != "__line__"})
    raw = doc.mapping.get("shapes")
    if not isinstance(raw, list) or not raw:
        raise doc.error("'shapes' must be a non-empty list")
    hosts, names = [], set()
    for item in raw:
        shape, count = _shape(path, item, defaults)
        if shape.name in names:
            raise inputs.InputError(path, item.get("__line__"), "shape %r "
                                    "is listed twice" % shape.name)
        names.add(shape.name)
        hosts += [Host("%s-%d" % (shape.name, len(hosts) + i), shape)
                  for i in range(count)]
    return Fleet(tuple(hosts))


def _shape(path, item, defaults):
    fields = inputs.Fields(path, item, "shape")
    fields.check_known(_SHAPE_KEYS)
    name = fields.text("name")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise fields.error("name %r: letters, digits, '.', '_' and '-' "
                           "only" % name)
    value = {k: fields.number(k, defaults[k]) for k in DEFAULTS}
    totals = {"VCPU": fields.number("vcpus", kind=int, minimum=1),
              "MEMORY_MB": fields.number("memory_mb", kind=int, minimum=1),
              "DISK_GB": fields.number("disk_gb", 0, kind=int)}
    inventory = {}
    for rc in CLASSES:
        reserved = int(value[_RESERVED[rc]]) if rc in _RESERVED else 0
        if reserved > totals[rc] and totals[rc]:
            raise fields.error("%s: reserved %d is more than the total %d"
                               % (rc, reserved, totals[rc]))
        inventory[rc] = (totals[rc], min(reserved, totals[rc]),
                         value[_RATIOS[rc]])
    return Shape(name, inventory), fields.number("count", kind=int,
                                                 minimum=1)


def parse_addition(text):
    """``"20xram-rich"`` -> ``(20, "ram-rich")``.

    :raises: ValueError
    """
    match = re.fullmatch(r"(\d+)x(\S+)", text)
    if not match or int(match.group(1)) < 1:
        raise ValueError("%r: expected COUNTxSHAPE, e.g. 20xram-rich" % text)
    return int(match.group(1)), match.group(2)


def from_host_states(states):
    """A fleet of a running Gantt's hosts (``HostState`` objects), each
    holding what it holds now (at most its capacity); hosts of the same
    inventory share a shape, named after its sizes (``32c-256G-2000G``,
    then ``32c-256G-2000G-2`` for the same sizes with other ratios or
    reserved amounts)."""
    hosts, shapes = [], {}
    for state in sorted(states, key=lambda s: s.host):
        res = {r.resource_class: r for r in state.resources
               if r.resource_class in CLASSES}
        inventory = {rc: (res[rc].total, res[rc].reserved,
                          res[rc].allocation_ratio) if rc in res
                     else (0, 0, 1.0) for rc in CLASSES}
        key = tuple(sorted(inventory.items()))
        if key not in shapes:
            name = "%dc-%dG-%dG" % (
                inventory["VCPU"][0], inventory["MEMORY_MB"][0] // 1024,
                inventory["DISK_GB"][0])
            taken = sum(1 for s in shapes.values()
                        if s.name.startswith(name))
            # same sizes, other ratios or reserved amounts: another shape
            shapes[key] = Shape(name + ("-%d" % (taken + 1) if taken
                                        else ""), inventory)
        # an overcommitted host (a ratio lowered since) holds what fits
        held = {rc: min(r.used, int(shapes[key].capacity(rc)))
                for rc, r in res.items() if r.used}
        hosts.append(Host(state.host, shapes[key], held))
    return Fleet(tuple(hosts))


def host_uuid(index):
    """The simulated compute node uuid of host number ``index``."""
    return str(uuid.UUID(int=index + 1))
