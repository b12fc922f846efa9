"""Neutron's side of the differential test: run by the Python of a
virtualenv that has neutron installed from PyPI (never by Gantt's).

Reads cases as JSON on stdin and writes, per case, the router counts of
the agents the real Neutron scheduler classes choose:

* ``l3``: ``LeastRoutersScheduler`` (``AZLeastRoutersScheduler`` when the
  case has ``az_hints``), over a SQLite database holding the agents and
  their router bindings, so that the real queries
  (``Agent.get_l3_agent_with_min_routers``,
  ``get_l3_agents_ordered_by_num_routers``) count; ``ha`` cases ask
  ``_choose_router_agents_for_ha`` with ``max_l3_agents_per_router``.
* ``dhcp``: ``WeightScheduler.select`` (``dhcp_agents_per_network``
  agents, by ``load``).

A case: ``{"kind", "agents": [{"name", "load", "zone"}], "ha": bool,
"n": agents wanted, "az_hints": [zones]}``. An answer: the names chosen.
"""

import datetime
import json
import sys
import uuid
import warnings

warnings.filterwarnings("ignore")

from oslo_config import cfg  # noqa: E402
from oslo_db import options as db_options  # noqa: E402

db_options.set_defaults(cfg.CONF, connection="sqlite://")
cfg.CONF([], project="neutron")

from neutron.db import l3_hascheduler_db  # noqa: E402
from neutron.db.migration.models import head  # noqa: E402,F401
from neutron.db.models import agent as agent_model  # noqa: E402
from neutron.db.models import l3 as l3_model  # noqa: E402
from neutron.db.models import l3agent  # noqa: E402
from neutron.objects import agent as agent_obj  # noqa: E402
from neutron.scheduler import base_scheduler  # noqa: E402
from neutron.scheduler import l3_agent_scheduler  # noqa: E402
from neutron_lib import context as n_context  # noqa: E402
from neutron_lib.db import api as lib_db_api  # noqa: E402
from neutron_lib.db import model_base  # noqa: E402


class Plugin(l3_hascheduler_db.L3_HA_scheduler_db_mixin):
    """The L3 plugin's scheduler queries, nothing else."""


def _fresh_db():
    engine = lib_db_api.CONTEXT_WRITER.get_engine()
    model_base.BASEV2.metadata.drop_all(engine)
    model_base.BASEV2.metadata.create_all(engine)


def _store_agents(ctx, agents):
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    ids = {}
    with lib_db_api.CONTEXT_WRITER.using(ctx):
        for a in agents:
            ids[a["name"]] = str(uuid.uuid4())
            ctx.session.add(agent_model.Agent(
                id=ids[a["name"]], agent_type="L3 agent",
                binary="neutron-l3-agent", topic="l3_agent", host=a["name"],
                availability_zone=a["zone"], admin_state_up=True,
                created_at=now, started_at=now, heartbeat_timestamp=now,
                configurations="{}", load=0))
            for _ in range(a["load"]):
                router = str(uuid.uuid4())
                ctx.session.add(l3_model.Router(id=router, name="r",
                                                admin_state_up=True))
                ctx.session.add(l3agent.RouterL3AgentBinding(
                    router_id=router, l3_agent_id=ids[a["name"]],
                    binding_index=1))
    return ids


def l3(case):
    _fresh_db()
    ctx = n_context.get_admin_context()
    ids = _store_agents(ctx, case["agents"])
    hints = case.get("az_hints") or []
    cfg.CONF.set_override("max_l3_agents_per_router", case["n"])
    scheduler = (l3_agent_scheduler.AZLeastRoutersScheduler() if hints
                 else l3_agent_scheduler.LeastRoutersScheduler())
    # the candidates of AZLeastRoutersScheduler._get_candidates: agents
    # in one of the router's zone hints
    agents = agent_obj.Agent.get_objects(ctx, id=list(ids.values()))
    candidates = [a for a in agents
                  if not hints or a.availability_zone in hints]
    if not candidates:
        return []
    plugin = Plugin()
    if case["ha"]:
        chosen = scheduler._choose_router_agents_for_ha(plugin, ctx,
                                                        candidates)
    else:
        chosen = [scheduler._choose_router_agent(plugin, ctx, candidates)]
    return [a.host for a in chosen]


class _DhcpAgent(dict):
    """What WeightScheduler reads of an agent: ``load``."""

    @property
    def load(self):
        return self["load"]


def dhcp(case):
    agents = [_DhcpAgent(name=a["name"], load=a["load"])
              for a in case["agents"]]
    scheduler = base_scheduler.BaseWeightScheduler(None)
    chosen = scheduler.select(None, None, agents, [],
                              min(case["n"], len(agents)))
    return [a["name"] for a in chosen]


def main():
    cases = json.load(sys.stdin)
    json.dump([{"l3": l3, "dhcp": dhcp}[c["kind"]](c) for c in cases],
              sys.stdout)


if __name__ == "__main__":
    main()
