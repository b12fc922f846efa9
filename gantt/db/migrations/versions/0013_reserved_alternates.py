"""Holistic groups: each reserved slot keeps the alternates its plan
decided, so that a member taking the slot over is answered without a new
decision (see gantt.scheduler.groups.members).

A JSON list of provider uuids, best first; NULL for slots reserved
before this revision (their members' alternates are decided when they
take the slot over, as before).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29
"""

from alembic import op
import sqlalchemy as sa

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("group_reservations",
                  sa.Column("alternates", sa.Text, nullable=True))


def downgrade():
    op.drop_column("group_reservations", "alternates")
