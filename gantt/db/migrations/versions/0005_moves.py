"""Moves are recorded: their instance, and whether they finished.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    # one row per migration consumer: written when move_claim hands the
    # source to it, finished by confirm_move/revert_move and kept, so that
    # a late duplicate move_claim is refused (see gantt.db.moves); moves
    # in flight during the upgrade have no row and finish as before
    op.create_table(
        "moves",
        sa.Column("migration_uuid", sa.String(36), primary_key=True),
        sa.Column("instance_uuid", sa.String(36), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
    )
