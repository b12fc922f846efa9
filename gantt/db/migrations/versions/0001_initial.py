"""Initial schema: providers, inventories, consumers, allocations, reports.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "resource_providers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("root_provider_id", sa.Integer, nullable=True),
        sa.Column("parent_provider_id", sa.Integer, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("uuid", name="uniq_resource_providers0uuid"),
    )
    op.create_index("resource_providers_root_idx", "resource_providers",
                    ["root_provider_id"])
    op.create_table(
        "inventories",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("resource_class", sa.String(255), nullable=False),
        sa.Column("total", sa.BigInteger, nullable=False),
        sa.Column("reserved", sa.BigInteger, nullable=False),
        sa.Column("min_unit", sa.BigInteger, nullable=False),
        sa.Column("max_unit", sa.BigInteger, nullable=False),
        sa.Column("step_size", sa.BigInteger, nullable=False),
        sa.Column("allocation_ratio", sa.Float, nullable=False),
        sa.UniqueConstraint("resource_provider_id", "resource_class",
                            name="uniq_inventories0rp0rc"),
    )
    op.create_table(
        "consumers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=True),
        sa.Column("user_id", sa.String(255), nullable=True),
        sa.Column("instance_group_uuid", sa.String(36), nullable=True),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("uuid", name="uniq_consumers0uuid"),
    )
    op.create_index("consumers_group_idx", "consumers",
                    ["instance_group_uuid"])
    op.create_table(
        "allocations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id"), nullable=False),
        sa.Column("consumer_uuid", sa.String(36), nullable=False),
        sa.Column("resource_class", sa.String(255), nullable=False),
        sa.Column("used", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("allocations_consumer_idx", "allocations",
                    ["consumer_uuid"])
    op.create_index("allocations_rp_rc_idx", "allocations",
                    ["resource_provider_id", "resource_class"])
    op.create_table(
        "provider_traits",
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("trait", sa.String(255), primary_key=True),
    )
    op.create_table(
        "provider_aggregates",
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("aggregate_uuid", sa.String(36), primary_key=True),
    )
    op.create_table(
        "host_reports",
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("nodename", sa.String(255), nullable=False),
        sa.Column("cell_uuid", sa.String(36), nullable=True),
        sa.Column("availability_zone", sa.String(255), nullable=True),
        sa.Column("disabled", sa.Boolean, nullable=False),
        sa.Column("report_sequence", sa.BigInteger, nullable=False),
        sa.Column("num_instances", sa.Integer, nullable=False),
        sa.Column("num_io_ops", sa.Integer, nullable=False),
        sa.Column("details", sa.Text, nullable=False),
        sa.Column("agent_updated_at", sa.DateTime, nullable=True),
        sa.Column("received_at", sa.DateTime, nullable=False),
    )
    op.create_index("host_reports_host_idx", "host_reports", ["host"])
    op.create_table(
        "instance_groups",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("policy", sa.String(32), nullable=False),
        sa.Column("max_server_per_host", sa.Integer, nullable=True),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("uuid", name="uniq_instance_groups0uuid"),
    )
