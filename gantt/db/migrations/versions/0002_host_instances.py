"""Host reports keep the instances their agent says it runs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    # JSON list of consumer uuids; NULL when the agent does not report them
    # (ComputeNode 1.0), which keeps that host out of the orphan audit
    with op.batch_alter_table("host_reports") as batch:
        batch.add_column(sa.Column("instance_uuids", sa.Text, nullable=True))
