"""Holistic groups: each group's rules and its reserved member slots.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "group_plans",
        sa.Column("group_uuid", sa.String(36), primary_key=True),
        sa.Column("policies", sa.Text, nullable=False),
        sa.Column("objective", sa.String(32), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=True),
        sa.Column("user_id", sa.String(255), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True))
    op.create_table(
        "group_reservations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("group_uuid", sa.String(36), nullable=False),
        sa.Column("slot", sa.Integer, nullable=False),
        sa.Column("member", sa.String(255), nullable=False),
        sa.Column("consumer_uuid", sa.String(36), nullable=False),
        sa.Column("instance_uuid", sa.String(36), nullable=True),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("group_uuid", "slot",
                            name="uniq_group_reservations0group0slot"),
        sa.UniqueConstraint("consumer_uuid",
                            name="uniq_group_reservations0consumer"))
    op.create_index("group_reservations_expiry_idx", "group_reservations",
                    ["expires_at"])


def downgrade():
    op.drop_table("group_reservations")
    op.drop_table("group_plans")
