"""One compute node per host name; the agent's boot id of each report.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    _refuse_shared_host_names()
    # batch: SQLite rebuilds the table; MariaDB and PostgreSQL alter it
    with op.batch_alter_table("host_reports") as batch:
        # a report of another boot than the stored one is stored whatever
        # its sequence: a restarted agent is never locked out
        batch.add_column(sa.Column("boot_id", sa.String(36), nullable=True))
        # one host name, one compute node: a second provider reporting
        # under a name held is refused, and two workers storing two such
        # reports at once cannot both succeed. The unique key's index
        # replaces the plain one on host.
        batch.create_unique_constraint("uniq_host_reports0host", ["host"])
        batch.drop_index("host_reports_host_idx")


def _refuse_shared_host_names():
    """Stop, naming them, if several compute nodes share a host name: the
    operator chooses which one stays (doc/source/admin/operating.rst)."""
    shared = op.get_bind().execute(sa.text(
        "SELECT host FROM host_reports GROUP BY host "
        "HAVING COUNT(*) > 1 ORDER BY host")).scalars().all()
    if shared:
        raise RuntimeError(
            "Migration 0007 makes host names unique, but several compute "
            "nodes report as host(s) %s. Delete the providers that are no "
            "longer in service (see 'Re-deploying a host' in the operator "
            "guide), then run gantt-manage db sync again."
            % ", ".join(shared[:20]))
