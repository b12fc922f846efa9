"""Which provider trees are *hosts*, as server-group policy counts them.

A group's anti-affinity keeps its members on distinct hosts; its affinity
keeps them on one. A host is the root of a tree the scheduler places on:

* a compute node (a root with a ``host_reports`` row), named by its
  host name;
* a standalone provider of a stated kind (a ``provider_reports`` row
  whose kind is not ``pool``) that is not a sharing provider (no
  ``MISC_SHARES_VIA_AGGREGATE`` trait): an L3 or DHCP agent, a volume
  backend, a container host, named by its provider name. The bindings of
  an HA router are a group's members, and the claim keeps them on
  distinct agents as it keeps a group's instances on distinct compute
  nodes.

A sharing provider (a storage pool of kind ``pool``, or any provider with
the sharing trait) is never a host: every member of a group may take
disk from the same pool, whatever its kind.

The expressions here are correlated on a root provider's id column (each
EXISTS names its own table and takes every other from the enclosing
statement, however deep it is nested), for
the claim's snapshot and group check and for the lookups the filters read
(:mod:`gantt.db.allocations`).
"""

import sqlalchemy as sa

from gantt.db.models import PROVIDER_REPORTS
from gantt.db.models import REPORTS
from gantt.db.models import RP
from gantt.db.models import TRAITS

#: the kind of a standalone provider that did not say its own: a pool
POOL_KIND = "pool"
SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"

#: the root of an allocated provider, for the lookups' name
ROOT = RP.alias("host_root")


def standalone_host(root_id):
    """SQL: ``root_id`` is a standalone provider that is a host."""
    sharing = (sa.exists()
               .where(TRAITS.c.resource_provider_id == root_id)
               .where(TRAITS.c.trait == SHARING_TRAIT)
               .correlate_except(TRAITS))
    return (sa.exists()
            .where(PROVIDER_REPORTS.c.resource_provider_id == root_id)
            .where(PROVIDER_REPORTS.c.kind != POOL_KIND)
            .where(~sharing)
            .correlate_except(PROVIDER_REPORTS))


def is_host(root_id):
    """SQL: ``root_id`` is a host (a compute node or a standalone one)."""
    compute = (sa.exists().where(REPORTS.c.resource_provider_id == root_id)
               .correlate_except(REPORTS))
    return sa.or_(compute, standalone_host(root_id))


def named_hosts(query):
    """``query`` (selecting from allocations joined to their provider,
    ``RP``) joined to each provider's root (:data:`ROOT`) and its host
    report, kept to the roots that are hosts.

    :returns: (the query, the host-name column: the compute node's host,
        else the standalone provider's name)
    """
    name = sa.func.coalesce(REPORTS.c.host, ROOT.c.name)
    query = (query
             .join(ROOT, ROOT.c.id == RP.c.root_provider_id)
             .outerjoin(REPORTS, REPORTS.c.resource_provider_id == ROOT.c.id)
             .where(sa.or_(REPORTS.c.resource_provider_id.is_not(None),
                           standalone_host(ROOT.c.id))))
    return query, name
