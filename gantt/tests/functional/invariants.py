"""What must hold in the database after any storm, race or fault.

Each check is plain SQL over the tables, independent of the claim's code,
so a bug in the claim cannot hide itself from its own test (the overcommit
check is ``gantt.db.audit.overcommitted``, a read of its own that the demo
and the C1M benchmark run too).
"""

import dataclasses

import sqlalchemy as sa

from gantt.db import audit

# a consumer's allocations must all come from one host (one tree root)
SPLIT = sa.text("""
    SELECT a.consumer_uuid, COUNT(DISTINCT rp.root_provider_id)
    FROM allocations a
    JOIN resource_providers rp ON rp.id = a.resource_provider_id
    GROUP BY a.consumer_uuid
    HAVING COUNT(DISTINCT rp.root_provider_id) > 1
""")

# a consumer holds each class once per provider (never two claims summed)
DOUBLED = sa.text("""
    SELECT consumer_uuid, resource_provider_id, resource_class, COUNT(*)
    FROM allocations
    GROUP BY consumer_uuid, resource_provider_id, resource_class
    HAVING COUNT(*) > 1
""")

ANTI_AFFINITY = sa.text("""
    SELECT g.uuid, rp.root_provider_id, COUNT(DISTINCT c.uuid)
    FROM consumers c
    JOIN instance_groups g ON g.uuid = c.instance_group_uuid
    JOIN allocations a ON a.consumer_uuid = c.uuid
    JOIN resource_providers rp ON rp.id = a.resource_provider_id
    WHERE g.policy = 'anti-affinity'
    GROUP BY g.uuid, g.max_server_per_host, rp.root_provider_id
    HAVING COUNT(DISTINCT c.uuid) > COALESCE(g.max_server_per_host, 1)
""")

AFFINITY = sa.text("""
    SELECT g.uuid, COUNT(DISTINCT rp.root_provider_id)
    FROM consumers c
    JOIN instance_groups g ON g.uuid = c.instance_group_uuid
    JOIN allocations a ON a.consumer_uuid = c.uuid
    JOIN resource_providers rp ON rp.id = a.resource_provider_id
    WHERE g.policy = 'affinity'
    GROUP BY g.uuid
    HAVING COUNT(DISTINCT rp.root_provider_id) > 1
""")

CONSUMERS_WITH_ALLOCATIONS = sa.text(
    "SELECT DISTINCT consumer_uuid FROM allocations")


@dataclasses.dataclass
class Findings:
    overcommitted: list
    split_consumers: list
    doubled: list
    anti_affinity_broken: list
    affinity_broken: list
    # server groups' policies per level (gantt.db.audit.level_breaches)
    level_broken: list
    allocated: set

    def violations(self):
        return {name: rows for name, rows in dataclasses.asdict(self).items()
                if name != "allocated" and rows}


def check(db):
    """Read every invariant from the database behind ``db``."""
    with db.engine.connect() as conn:
        def rows(query):
            return [tuple(r) for r in conn.execute(query)]
        return Findings(
            overcommitted=audit.overcommitted(conn),
            split_consumers=rows(SPLIT),
            doubled=rows(DOUBLED),
            anti_affinity_broken=rows(ANTI_AFFINITY),
            affinity_broken=rows(AFFINITY),
            level_broken=audit.level_breaches(conn),
            allocated={r[0] for r in rows(CONSUMERS_WITH_ALLOCATIONS)})


def allocations(db):
    """``{consumer: {(provider uuid, class): used}}`` read with plain SQL."""
    rows = sa.text(
        "SELECT a.consumer_uuid, rp.uuid, a.resource_class, a.used "
        "FROM allocations a JOIN resource_providers rp "
        "ON rp.id = a.resource_provider_id")
    result = {}
    with db.engine.connect() as conn:
        for consumer, rp, rc, used in conn.execute(rows):
            result.setdefault(consumer, {})[(rp, rc)] = used
    return result
