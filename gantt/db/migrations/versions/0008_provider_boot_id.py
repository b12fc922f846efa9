"""The boot id of each standalone provider's stored report.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    # batch: SQLite rebuilds the table; MariaDB and PostgreSQL alter it
    with op.batch_alter_table("provider_reports") as batch:
        # a report of another boot than the stored one is stored whatever
        # its sequence, as for compute nodes (0007): a forged report cannot
        # lock the provider's service out past its next start
        batch.add_column(sa.Column("boot_id", sa.String(36), nullable=True))
