"""PCI passthrough: aliases, requests and whether a host's pools fit them.

As in Nova, operators name device kinds with ``[pci] alias`` (JSON, one per
line: ``{"name": "nic", "vendor_id": "8086", "product_id": "154d",
"device_type": "type-PF"}``; the same name may be given several times for
several kinds) and flavors ask for them with ``pci_passthrough:alias =
"nic:2, gpu"`` (count 1 when omitted).

A host fits when its free pools can serve every request in turn: each
request takes devices greedily from the pools that match one of its
alias's specs, in pool-key order, and a later request sees what an earlier
one took (Nova's ``PciDeviceStats.support_requests``). Both the per-host
and the column path use that same order, so they always agree.
:func:`allocate` says which pools those devices come from, and
:func:`remaining` what a host has left once an instance took them (Nova's
``PciDeviceStats.apply_requests``, for the next instance of a request).

Not modelled: the NUMA affinity of devices (``numa_policy`` of an alias,
``hw:pci_numa_affinity_policy``): every pool of a host is eligible.
"""

import dataclasses
import json

import numpy as np

from gantt import exception
from gantt.scheduler.state import columns as columns_mod

ALIAS_SPEC = "pci_passthrough:alias"
#: the name under which a request keeps its parsed PCI requests
#: (``ResourceRequest.memo``)
REQUESTS_MEMO = "pci_requests"
#: alias keys that are not matched against pool fields or tags
_ALIAS_ONLY = ("name", "numa_policy")


@dataclasses.dataclass(frozen=True)
class Pool:
    vendor_id: str
    product_id: str
    numa_node: int | None
    count: int
    tags: tuple               # sorted (key, value) pairs

    @classmethod
    def from_obj(cls, pool):
        return cls(pool.vendor_id.lower(), pool.product_id.lower(),
                   pool.numa_node, pool.count,
                   tuple(sorted(pool.tags.items())))

    @property
    def key(self):
        """The identity of a pool: equal keys on one host are merged."""
        return json.dumps([self.vendor_id, self.product_id, self.numa_node,
                           list(self.tags)])

    def attribute(self, name):
        if name == "vendor_id":
            return self.vendor_id
        if name == "product_id":
            return self.product_id
        return dict(self.tags).get(name)


@dataclasses.dataclass(frozen=True)
class Request:
    alias: str
    count: int
    specs: tuple              # of frozensets of (key, value): any of them


def _spec_matches(spec, pool):
    return all(pool.attribute(k) == v for k, v in spec)


def request_matches(request, pool):
    return any(_spec_matches(spec, pool) for spec in request.specs)


def parse_aliases(lines):
    """``[pci] alias`` lines -> {name: [spec, ...]}.

    :raises: ConfigurationError naming the bad line
    """
    aliases = {}
    for line in lines:
        try:
            alias = json.loads(line)
        except ValueError as exc:
            raise exception.ConfigurationError(
                reason="[pci] alias %r is not JSON: %s" % (line, exc)
            ) from None
        if not isinstance(alias, dict) or not alias.get("name"):
            raise exception.ConfigurationError(
                reason="[pci] alias %r needs a name" % (line,))
        spec = []
        for key, value in alias.items():
            if key in _ALIAS_ONLY:
                continue
            key = "dev_type" if key == "device_type" else key
            value = str(value)
            if key in ("vendor_id", "product_id"):
                value = value.lower()
            spec.append((key, value))
        aliases.setdefault(alias["name"], []).append(frozenset(spec))
    return aliases


def requests_from_flavor(extra_specs, aliases):
    """The PCI requests of a flavor's ``pci_passthrough:alias``.

    :raises: InvalidRequest for an unknown alias or a bad count
    """
    text = extra_specs.get(ALIAS_SPEC)
    if not text:
        return ()
    requests = []
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        name, _, count = item.partition(":")
        name = name.strip()
        if name not in aliases:
            raise exception.InvalidRequest(
                reason="PCI alias %r is not defined in [pci] alias" % name)
        try:
            amount = int(count) if count.strip() else 1
        except ValueError:
            amount = 0
        if amount < 1:
            raise exception.InvalidRequest(
                reason="PCI alias %r: count must be a positive integer, got "
                       "%r" % (name, count))
        requests.append(Request(name, amount, tuple(aliases[name])))
    return tuple(requests)


def merged(pools):
    """``{key: (Pool, free count)}`` with equal keys summed, key-sorted."""
    out = {}
    for pool in pools:
        known = out.get(pool.key)
        out[pool.key] = (pool, pool.count + (known[1] if known else 0))
    return dict(sorted(out.items()))


def allocate(pools, requests):
    """``{pool key: devices taken}`` serving ``requests`` in turn from a
    host's pools, or None if they cannot all be served."""
    pools_by_key = merged(pools)
    free = {key: count for key, (_pool, count) in pools_by_key.items()}
    taken = {}
    for request in requests:
        need = request.count
        for key, (pool, _count) in pools_by_key.items():
            if need == 0:
                break
            if request_matches(request, pool):
                take = min(need, free[key])
                if take:
                    free[key] -= take
                    taken[key] = taken.get(key, 0) + take
                    need -= take
        if need:
            return None
    return taken


def host_supports(pools, requests):
    """Whether a host's pools can serve ``requests`` (in order)."""
    return allocate(pools, requests) is not None


def remaining(pools, taken):
    """A host's pools once ``taken`` (``{pool key: devices}``) are gone."""
    if not taken:
        return pools
    return tuple(dataclasses.replace(pool, count=max(0, count
                                                     - taken.get(key, 0)))
                 for key, (pool, count) in merged(pools).items())


class PciColumns:
    """Free device counts as ``rows x pool keys``; ``keys`` are sorted
    lazily by the reader (pool keys only ever get added)."""

    def __init__(self, rows, cols=4):
        self.keys = columns_mod.KeyIndex()
        self.pools = []          # per key: a Pool with that key
        self.counts = np.zeros((rows, cols), dtype=np.int64, order="F")

    def grown(self, rows):
        new = PciColumns.__new__(PciColumns)
        new.keys = columns_mod.KeyIndex(self.keys.names)
        new.pools = list(self.pools)
        new.counts = np.zeros((rows, self.counts.shape[1]), dtype=np.int64,
                              order="F")
        r = min(rows, self.counts.shape[0])
        new.counts[:r] = self.counts[:r]
        return new

    def write(self, row, pools):
        pools_by_key = merged(pools)
        missing = [k for k in pools_by_key if self.keys.get(k) is None]
        needed = len(self.keys) + len(missing)
        if needed > self.counts.shape[1]:
            wider = np.zeros((self.counts.shape[0],
                              max(needed, 2 * self.counts.shape[1])),
                             dtype=np.int64, order="F")
            wider[:, :self.counts.shape[1]] = self.counts
            self.counts = wider
        for key in missing:
            self.pools.append(pools_by_key[key][0])
            self.keys.add(key)
        counts = self.counts
        counts[row] = 0
        for key, (_pool, count) in pools_by_key.items():
            counts[row, self.keys.get(key)] = count

    def free_total(self, n):
        return self.counts[:n].sum(axis=1)

    def supports(self, n, requests):
        """Boolean array over the first ``n`` rows."""
        counts = self.counts
        known = min(len(self.keys), counts.shape[1], len(self.pools))
        order = sorted(range(known), key=lambda c: self.keys.names[c])
        free = {c: counts[:n, c].copy() for c in order}
        ok = np.ones(n, dtype=bool)
        for request in requests:
            need = np.full(n, request.count, dtype=np.int64)
            for col in order:
                if request_matches(request, self.pools[col]):
                    take = np.minimum(need, free[col])
                    free[col] -= take
                    need -= take
            ok &= need == 0
        return ok
