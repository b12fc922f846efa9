"""Hosts read back from the database one by one, for tests.

The worker loads hosts as columns (:class:`gantt.db.host_load.StoredHosts`);
tests compare one host at a time, as a :class:`StoredHost`.
"""

import dataclasses

from gantt.db import host_load


@dataclasses.dataclass
class StoredHost:
    """One host as read back from the database at worker start."""

    uuid: str
    generation: int
    report: dict
    inventories: dict = dataclasses.field(default_factory=dict)
    traits: set = dataclasses.field(default_factory=set)
    aggregates: set = dataclasses.field(default_factory=set)
    usage: dict = dataclasses.field(default_factory=dict)
    # the rest of its provider tree, parents before children
    children: list = dataclasses.field(default_factory=list)


def stored_host(stored, i):
    """Host ``i`` of a StoredHosts as a :class:`StoredHost`."""
    rp_id, generation = int(stored.ids[i]), int(stored.generation[i])
    report = {
        "id": rp_id, "uuid": stored.uuids[i], "generation": generation,
        "resource_provider_id": rp_id, "host": stored.hosts[i],
        "nodename": stored.nodenames[i], "cell_uuid": stored.cell_uuids[i],
        "availability_zone": stored.zones[i],
        "disabled": bool(stored.disabled[i]),
        "report_sequence": int(stored.report_sequence[i]),
        "num_instances": int(stored.num_instances[i]),
        "num_io_ops": int(stored.num_io_ops[i]),
        "details": stored.details(i),
        "instance_uuids": stored.instance_uuids[i],
        "agent_updated_at": stored.agent_updated_at[i],
        "received_at": stored.received(i),
        "location": stored.locations[i], "source": stored.sources[i]}
    return StoredHost(
        uuid=stored.uuids[i], generation=generation, report=report,
        inventories=dict(stored.inventories(i)),
        traits=set(stored.traits(i)), aggregates=set(stored.aggregates(i)),
        usage=stored.usage_of(i), children=list(stored.children.get(i, ())))


def load_hosts(db):
    """Every reported host with its provider tree: inventory, traits,
    aggregates and usage of each provider, as :class:`StoredHost`."""
    stored = host_load.load_host_columns(db)
    return [stored_host(stored, i) for i in range(len(stored))]
