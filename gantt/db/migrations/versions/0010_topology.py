"""Failure domains: where each provider is in the datacenter, and each
server group's policies per level.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade():
    # the location the report says, ``room=r1/rack=b07`` (NULL: none);
    # topology aggregates fill the levels it leaves out
    for table in ("host_reports", "provider_reports"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("location", sa.String(255),
                                       nullable=True))
    # the group's policies per level as JSON, ``[["rack", "anti-affinity",
    # 1], ...]`` (NULL: none, the host-level policy alone)
    with op.batch_alter_table("instance_groups") as batch:
        batch.add_column(sa.Column("level_policies", sa.Text,
                                   nullable=True))
