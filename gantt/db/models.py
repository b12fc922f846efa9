"""SQLAlchemy models: Placement-shaped tables plus host reports and groups.

Resource classes and traits are stored by name: names are validated when
they arrive (os-resource-classes / os-traits / CUSTOM_*), and keeping them
as strings avoids a join on the claim's hot path.
"""

import sqlalchemy as sa
from sqlalchemy import orm


class Base(orm.DeclarativeBase):
    pass


class ResourceProvider(Base):
    __tablename__ = "resource_providers"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_resource_providers0uuid"),
        sa.Index("resource_providers_root_idx", "root_provider_id"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(200), nullable=False)
    # bumped by every change of inventory or allocations: the claim's
    # compare-and-swap token
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    root_provider_id = sa.Column(sa.Integer, nullable=True)
    parent_provider_id = sa.Column(sa.Integer, nullable=True)
    created_at = sa.Column(sa.DateTime, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=True)


class Inventory(Base):
    __tablename__ = "inventories"
    __table_args__ = (
        sa.UniqueConstraint("resource_provider_id", "resource_class",
                            name="uniq_inventories0rp0rc"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
        nullable=False)
    resource_class = sa.Column(sa.String(255), nullable=False)
    total = sa.Column(sa.BigInteger, nullable=False)
    reserved = sa.Column(sa.BigInteger, nullable=False, default=0)
    min_unit = sa.Column(sa.BigInteger, nullable=False, default=1)
    max_unit = sa.Column(sa.BigInteger, nullable=False)
    step_size = sa.Column(sa.BigInteger, nullable=False, default=1)
    allocation_ratio = sa.Column(sa.Float, nullable=False, default=1.0)


class Consumer(Base):
    __tablename__ = "consumers"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_consumers0uuid"),
        sa.Index("consumers_group_idx", "instance_group_uuid"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    instance_group_uuid = sa.Column(sa.String(36), nullable=True)
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    created_at = sa.Column(sa.DateTime, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=True)
    # Placement's consumer type (REST API 1.38; see migration 0012)
    consumer_type = sa.Column(sa.String(255), nullable=True)


class Allocation(Base):
    __tablename__ = "allocations"
    __table_args__ = (
        sa.Index("allocations_consumer_idx", "consumer_uuid"),
        # usage sums read the index alone (see migration 0006)
        sa.Index("allocations_rp_rc_used_idx", "resource_provider_id",
                 "resource_class", "used"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey("resource_providers.id"), nullable=False)
    consumer_uuid = sa.Column(sa.String(36), nullable=False)
    resource_class = sa.Column(sa.String(255), nullable=False)
    used = sa.Column(sa.BigInteger, nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False)


class ProviderTrait(Base):
    __tablename__ = "provider_traits"

    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
        primary_key=True)
    trait = sa.Column(sa.String(255), primary_key=True)


class ProviderAggregate(Base):
    __tablename__ = "provider_aggregates"

    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
        primary_key=True)
    aggregate_uuid = sa.Column(sa.String(36), primary_key=True)


class HostReport(Base):
    """The latest report of one compute host, besides its provider rows."""

    __tablename__ = "host_reports"
    __table_args__ = (
        # one host name, one compute node (see migration 0007)
        sa.UniqueConstraint("host", name="uniq_host_reports0host"),
    )

    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
        primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    nodename = sa.Column(sa.String(255), nullable=False)
    cell_uuid = sa.Column(sa.String(36), nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    report_sequence = sa.Column(sa.BigInteger, nullable=False)
    num_instances = sa.Column(sa.Integer, nullable=False, default=0)
    num_io_ops = sa.Column(sa.Integer, nullable=False, default=0)
    # capabilities, stats and metrics as JSON: operator-visible detail the
    # scheduler reads only from its cache, never from SQL
    details = sa.Column(sa.Text, nullable=False, default="{}")
    # JSON list of the consumers the agent runs; NULL: it does not say
    instance_uuids = sa.Column(sa.Text, nullable=True)
    agent_updated_at = sa.Column(sa.DateTime, nullable=True)
    received_at = sa.Column(sa.DateTime, nullable=False)
    # the agent's boot the stored report is from (NULL: it does not say);
    # a report of another boot is stored whatever its sequence
    boot_id = sa.Column(sa.String(36), nullable=True)
    # where the host is, as reported (``room=r1/rack=b07``; see migration
    # 0010): the claim reads it for policies per level
    location = sa.Column(sa.String(255), nullable=True)
    # who wrote the row: NULL an agent's report, ``placement-api`` the REST
    # API for a COMPUTE_NODE root (see migration 0015, gantt.db.api_hosts)
    source = sa.Column(sa.String(16), nullable=True)


class ProviderReport(Base):
    """The latest report of one standalone provider (its own tree root).

    Standalone providers (a storage pool shared through an aggregate, for
    example) belong to no compute node; the service owning one reports it
    with a growing ``report_sequence``, as agents do for their hosts.
    """

    __tablename__ = "provider_reports"

    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
        primary_key=True)
    report_sequence = sa.Column(sa.BigInteger, nullable=False)
    received_at = sa.Column(sa.DateTime, nullable=False)
    # the service's boot the stored report is from (NULL: it does not
    # say); a report of another boot is stored whatever its sequence
    boot_id = sa.Column(sa.String(36), nullable=True)
    # what it is (ProviderReport.kind; see migration 0009)
    kind = sa.Column(sa.String(32), nullable=False, server_default="pool")
    service = sa.Column(sa.String(255), nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    # typed values as JSON, read by the cache only
    capabilities = sa.Column(sa.Text, nullable=False, server_default="{}")
    # a container host: the instance it runs in
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    # where the provider is, as reported (see migration 0010)
    location = sa.Column(sa.String(255), nullable=True)


class InstanceGroup(Base):
    __tablename__ = "instance_groups"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_instance_groups0uuid"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    policy = sa.Column(sa.String(32), nullable=False)
    max_server_per_host = sa.Column(sa.Integer, nullable=True)
    # bumped by every claim of a member: serialises claims within a group so
    # that group policy is enforced inside the claim transaction
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    created_at = sa.Column(sa.DateTime, nullable=False)
    # policies per level, JSON ``[[level, rule, limit], ...]`` (migration
    # 0010); NULL: the host-level ``policy`` alone
    level_policies = sa.Column(sa.Text, nullable=True)


class Aggregate(Base):
    """A host aggregate defined by operators (``set_aggregate``)."""

    __tablename__ = "aggregates"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_aggregates0uuid"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=True)


class AggregateHost(Base):
    """A host named in an aggregate's host list (by host name)."""

    __tablename__ = "aggregate_hosts"

    aggregate_id = sa.Column(
        sa.Integer, sa.ForeignKey("aggregates.id", ondelete="CASCADE"),
        primary_key=True)
    host = sa.Column(sa.String(255), primary_key=True)


class AggregateMetadata(Base):
    """One metadata key of an aggregate (Nova's aggregate_metadata)."""

    __tablename__ = "aggregate_metadata"

    aggregate_id = sa.Column(
        sa.Integer, sa.ForeignKey("aggregates.id", ondelete="CASCADE"),
        primary_key=True)
    key = sa.Column(sa.String(255), primary_key=True)
    value = sa.Column(sa.String(255), nullable=False)


class _CustomName:
    """A CUSTOM_ name defined through the REST API (migration 0012)."""

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    name = sa.Column(sa.String(255), nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=True)


class CustomResourceClass(_CustomName, Base):
    __tablename__ = "resource_classes"
    __table_args__ = (
        sa.UniqueConstraint("name", name="uniq_resource_classes0name"),
    )


class CustomTrait(_CustomName, Base):
    __tablename__ = "traits"
    __table_args__ = (
        sa.UniqueConstraint("name", name="uniq_traits0name"),
    )


class Move(Base):
    """A move's migration consumer and the instance it holds the source
    for (Nova's migration record, as far as claims need it).

    ``state`` is "active" from the hand-over in ``move_claim`` until
    ``confirm_move`` or ``revert_move`` makes it "confirmed" or
    "reverted". A finished row stays: a ``move_claim`` naming it again (a
    duplicate delivered late) is refused instead of handing the instance's
    new allocations to the migration a second time. The orphan audit
    reads active rows: the source host lists the instance, not the
    migration.
    """

    __tablename__ = "moves"

    migration_uuid = sa.Column(sa.String(36), primary_key=True)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    state = sa.Column(sa.String(16), nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=True)


class GroupPlanRow(Base):
    """A holistic group's rules, as its last reserve or extend stated
    them: what a member's fallback placement must keep."""

    __tablename__ = "group_plans"

    group_uuid = sa.Column(sa.String(36), primary_key=True)
    # JSON: [{"level", "rule", "limit", "weight"}, ...]
    policies = sa.Column(sa.Text, nullable=False)
    objective = sa.Column(sa.String(32), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    created_at = sa.Column(sa.DateTime, nullable=False)
    updated_at = sa.Column(sa.DateTime, nullable=True)


class TopologyLevels(Base):
    """The ``[topology] levels`` the last worker started with (one row,
    ``id`` 1; migration 0014): a worker starting with others logs the
    change (:mod:`gantt.db.levels`)."""

    __tablename__ = "topology_levels"

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    levels = sa.Column(sa.Text, nullable=False)     # "row,rack"
    updated_at = sa.Column(sa.DateTime, nullable=False)


class GroupReservation(Base):
    """One member slot claimed ahead of its instance: the allocations
    are the reservation consumer's until a member takes them over, the
    group is released, or ``expires_at`` passes (see
    gantt.db.reservations)."""

    __tablename__ = "group_reservations"
    __table_args__ = (
        sa.UniqueConstraint("group_uuid", "slot",
                            name="uniq_group_reservations0group0slot"),
        sa.UniqueConstraint("consumer_uuid",
                            name="uniq_group_reservations0consumer"),
        sa.Index("group_reservations_expiry_idx", "expires_at"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    group_uuid = sa.Column(sa.String(36), nullable=False)
    slot = sa.Column(sa.Integer, nullable=False)
    member = sa.Column(sa.String(255), nullable=False)
    consumer_uuid = sa.Column(sa.String(36), nullable=False)
    # the member that took the slot over (None: still reserved)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    expires_at = sa.Column(sa.DateTime, nullable=False)
    created_at = sa.Column(sa.DateTime, nullable=False)
    # the plan's alternates for the slot: a JSON list of provider uuids,
    # best first (None: reserved before they were kept)
    alternates = sa.Column(sa.Text, nullable=True)


# -- table handles --------------------------------------------------------
# One name per table, for the SQLAlchemy Core queries of gantt.db (which
# imports them by name: ``from gantt.db.models import RP``).

RP = ResourceProvider.__table__
INV = Inventory.__table__
CONSUMERS = Consumer.__table__
ALLOC = Allocation.__table__
TRAITS = ProviderTrait.__table__
AGGS = ProviderAggregate.__table__          # a provider's aggregates
REPORTS = HostReport.__table__
PROVIDER_REPORTS = ProviderReport.__table__
GROUPS = InstanceGroup.__table__
AGGREGATES = Aggregate.__table__            # the aggregates themselves
AGGREGATE_HOSTS = AggregateHost.__table__
AGGREGATE_META = AggregateMetadata.__table__
MOVES = Move.__table__
GROUP_PLANS = GroupPlanRow.__table__
TOPOLOGY_LEVELS = TopologyLevels.__table__
RESERVATIONS = GroupReservation.__table__
CUSTOM_CLASSES = CustomResourceClass.__table__
CUSTOM_TRAITS = CustomTrait.__table__

#: the fields of an inventory, in the order the database's readers give
#: them as tuples (``scheduler.state.update.Inventory``'s order)
INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit",
                    "step_size", "allocation_ratio")
