"""Nova's own records of its compute nodes, read where nova-scheduler
reads them.

nova-compute tells Placement (``gantt-api``) only what a resource
provider holds: the provider is named after the node (the hypervisor's
host name) and its uuid is the node's. Two things Gantt needs for Nova
are not in it:

* the **service host**: the ``[DEFAULT] host`` of the nova-compute that
  runs the node. Nova's conductor casts the build to it and looks its
  cell up by it (``HostMapping``); aggregates, server groups and
  ``force_hosts`` name it. It differs from the node's name when the
  service's host name is short and the hypervisor's is fully qualified,
  and for the fake driver's ``compute`` service (node ``fake-mini``);
* the node's **cell**: the one whose database holds its record (the
  cell Nova's conductor keeps a move of its instances in);
* the **hypervisor's capabilities** ImagePropertiesFilter and
  ComputeCapabilitiesFilter read: ``supported_instances``,
  ``hypervisor_type``, ``hypervisor_version``.

nova-scheduler reads both from the ``compute_nodes`` table of each cell
database, which the API database's ``cell_mappings`` name. With ``[nova]
api_database_connection`` set (Nova's ``[api_database] connection``),
:class:`SqlComputeNodes` does the same, read only, by the provider's uuid;
nova-compute writes that row before it makes the provider, so the record
is there when gantt-api makes the node a host (:mod:`gantt.db.api_hosts`).
A cell whose ``database_connection`` is a template (``{scheme}://...``,
completed by each Nova service from its own ``[database] connection``) is
skipped with a warning: Gantt does not have Nova's options to complete it.

A reader is anything with :meth:`SqlComputeNodes.lookup`; Nova's
functional tests, whose databases live in the test process, pass one
reading them with Nova's objects (``gantt.tests.nova_functional``).
"""

import dataclasses
import json
import logging
import threading

import sqlalchemy as sa

LOG = logging.getLogger(__name__)

#: the uuid Nova gives cell0, where no compute node lives
CELL0_UUID = "00000000-0000-0000-0000-000000000000"

_CELLS = sa.table("cell_mappings", sa.column("uuid"), sa.column("name"),
                  sa.column("database_connection"))
_NODES = sa.table("compute_nodes", sa.column("uuid"), sa.column("host"),
                  sa.column("hypervisor_hostname"),
                  sa.column("hypervisor_type"),
                  sa.column("hypervisor_version"),
                  sa.column("supported_instances"), sa.column("deleted"))


@dataclasses.dataclass(frozen=True)
class NodeRecord:
    """What Nova's database says of one compute node."""

    host: str
    nodename: str
    # the cell whose database holds the record
    cell_uuid: str | None = None
    hypervisor_type: str | None = None
    hypervisor_version: int | None = None
    # JSON text: a list of [architecture, hypervisor_type, vm_mode]
    supported_instances: str | None = None

    def capabilities(self):
        """The node's capabilities as an agent would report them."""
        caps = {"hypervisor_type": self.hypervisor_type,
                "hypervisor_version": self.hypervisor_version,
                "supported_instances": self.supported_instances}
        return {k: v for k, v in caps.items() if v is not None}

    def details(self):
        """``host_reports.details`` of the node (see
        :mod:`gantt.scheduler.state.load`)."""
        return json.dumps({"capabilities": self.capabilities()},
                          sort_keys=True)


class SqlComputeNodes:
    """Reads ``compute_nodes`` of every cell the API database maps."""

    def __init__(self, api_connection):
        self._api = sa.create_engine(api_connection, pool_pre_ping=True)
        self._cells = {}            # database_connection -> engine
        self._lock = threading.Lock()

    def lookup(self, uuid):
        """The record of the compute node ``uuid``, or None when no cell
        has it (or Nova's databases cannot be read: logged)."""
        try:
            for cell_uuid, engine in self._cell_engines():
                with engine.connect() as conn:
                    row = conn.execute(sa.select(_NODES).where(
                        _NODES.c.uuid == uuid,
                        _NODES.c.deleted == 0)).first()
                if row is not None:
                    return _record(row, cell_uuid)
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning("Nova's compute node %s could not be read from "
                        "Nova's databases: %s", uuid, exc)
        return None

    def _cell_engines(self):
        with self._api.connect() as conn:
            cells = conn.execute(sa.select(_CELLS).where(
                _CELLS.c.uuid != CELL0_UUID)).all()
        engines = [(c.uuid, self._engine(c)) for c in cells]
        return [(uuid, e) for uuid, e in engines if e is not None]

    def _engine(self, cell):
        url = cell.database_connection
        if not url or "{" in url:
            LOG.warning("Cell %s (%s): its database connection is empty "
                        "or a template; its compute nodes are not read",
                        cell.name, cell.uuid)
            return None
        with self._lock:
            if url not in self._cells:
                self._cells[url] = sa.create_engine(url, pool_pre_ping=True)
            return self._cells[url]

    def dispose(self):
        self._api.dispose()
        for engine in self._cells.values():
            engine.dispose()


def _record(row, cell_uuid):
    return NodeRecord(
        host=row.host, nodename=row.hypervisor_hostname,
        cell_uuid=cell_uuid,
        hypervisor_type=row.hypervisor_type,
        hypervisor_version=row.hypervisor_version,
        supported_instances=row.supported_instances)


def from_conf(conf):
    """The reader ``[nova] api_database_connection`` configures, or None."""
    url = conf.nova.api_database_connection
    return SqlComputeNodes(url) if url else None
