"""Host aggregates with metadata, set by operators over RPC.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "aggregates",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("uuid", name="uniq_aggregates0uuid"),
    )
    op.create_table(
        "aggregate_hosts",
        sa.Column("aggregate_id", sa.Integer,
                  sa.ForeignKey("aggregates.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("host", sa.String(255), primary_key=True),
    )
    op.create_table(
        "aggregate_metadata",
        sa.Column("aggregate_id", sa.Integer,
                  sa.ForeignKey("aggregates.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("value", sa.String(255), nullable=False),
    )
