"""What a standalone provider is: its kind, owning service, zone,
capabilities and instance link (ProviderReport 1.2).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    # batch: SQLite rebuilds the table; MariaDB and PostgreSQL alter it
    with op.batch_alter_table("provider_reports") as batch:
        # the providers stored before were sharing and address pools,
        # reported without a kind: they are of the default kind "pool"
        batch.add_column(sa.Column("kind", sa.String(32), nullable=False,
                                   server_default="pool"))
        batch.add_column(sa.Column("service", sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column("availability_zone", sa.String(255),
                                   nullable=True))
        # JSON of typed values, as reported (``{}``: none)
        batch.add_column(sa.Column("capabilities", sa.Text, nullable=False,
                                   server_default="{}"))
        batch.add_column(sa.Column("instance_uuid", sa.String(36),
                                   nullable=True))
