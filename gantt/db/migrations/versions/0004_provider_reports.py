"""Standalone resource providers keep their latest report sequence.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    # a provider that belongs to no compute node (a shared storage pool,
    # for example) is its own tree root; this row marks it as standalone
    # and guards its reports with report_sequence, as host_reports does
    # for compute nodes
    op.create_table(
        "provider_reports",
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("report_sequence", sa.BigInteger, nullable=False),
        sa.Column("received_at", sa.DateTime, nullable=False),
    )
