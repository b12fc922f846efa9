"""Compute nodes made through the Placement REST API: which
``host_reports`` rows the API wrote rather than an agent.

``source`` is NULL for a row an agent's report wrote and
``placement-api`` for one the REST API keeps for a root provider with the
``COMPUTE_NODE`` trait (see gantt.db.api_hosts).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29
"""

from alembic import op
import sqlalchemy as sa

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("host_reports") as batch:
        batch.add_column(sa.Column("source", sa.String(16), nullable=True))
