"""Usage sums read from the index alone.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    # every claim sums the usage of the providers it takes from; a shared
    # storage pool holds an allocation of every instance on the hosts it
    # serves, so the sum covers thousands of rows. With ``used`` in the
    # index the database reads the index alone (Placement indexes its
    # allocations the same way). The new index is created before the old
    # one goes, so the provider foreign key always has an index.
    op.create_index("allocations_rp_rc_used_idx", "allocations",
                    ["resource_provider_id", "resource_class", "used"])
    op.drop_index("allocations_rp_rc_idx", table_name="allocations")
