"""What Placement's REST API keeps that reports and claims do not: custom
resource classes and traits defined before any provider has them, and a
consumer's type (microversion 1.38).

Standard classes and traits are not stored: os-resource-classes and
os-traits name them, and they cannot be changed.

Revision ID: 0012
Revises: 0009
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = "0012"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade():
    for table in ("resource_classes", "traits"):
        op.create_table(
            table,
            sa.Column("id", sa.Integer, primary_key=True,
                      autoincrement=True),
            sa.Column("name", sa.String(255), nullable=False),
            sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=True),
            sa.UniqueConstraint("name", name="uniq_%s0name" % table))
    with op.batch_alter_table("consumers") as batch:
        # NULL: written before 1.38 or through RPC; shown as "unknown"
        batch.add_column(sa.Column("consumer_type", sa.String(255),
                                   nullable=True))
