"""The topology levels the workers last started with: one row, so that a
worker starting with other ``[topology] levels`` says what changed.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29
"""

from alembic import op
import sqlalchemy as sa

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "topology_levels",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("levels", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False))


def downgrade():
    op.drop_table("topology_levels")
