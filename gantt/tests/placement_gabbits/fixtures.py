"""Gabbi fixtures named as Placement's, building its worlds in Gantt.

Placement's YAML files name their fixtures (``fixtures: [APIFixture]``);
gabbi looks each name up in this module. Every class here builds the world
of the Placement fixture of the same name
(``placement/tests/functional/fixtures/gabbits.py`` of openstack-placement
16.0.0): the same environment variables, the same providers (uuids from
``uuidsentinel`` where Placement's do), inventories, traits, aggregates and
allocations, but in a fresh Gantt database, written by Gantt's DB layer
(:mod:`gantt.tests.placement_gabbits.world`). The application under test
is Gantt's: ``gantt.api.app.make_app(conf)``, built on the first request
(gabbi asks for the application before fixtures start).

The database is SQLite unless ``GANTT_GABBITS_DB`` names ``mysql`` or
``postgresql`` (a throw-away database on this machine's server, per YAML
file).
"""

import os

from gabbi import fixture
from oslo_config import cfg
from oslo_middleware import cors
from oslo_policy import opts as policy_opts
from oslo_utils import uuidutils
from oslo_utils.fixture import uuidsentinel as uuids

from gantt.tests import fixtures as gantt_fixtures
from gantt.tests.placement_gabbits import policy_rules
from gantt.tests.placement_gabbits import world as world_mod

#: the conf of the running fixture; gabbi builds the application before
#: the fixture starts, so the application reads it on its first request
CONF = None


class LazyApp:
    """Gantt's application, made on the first request from :data:`CONF`."""

    def __init__(self):
        self._app = None

    def __call__(self, environ, start_response):
        if self._app is None:
            from gantt.api import app as app_mod
            self._app = app_mod.make_app(CONF)
        pep3333_path(environ)
        return self._app(environ, start_response)


def pep3333_path(environ):
    """``PATH_INFO`` as a WSGI server gives it (PEP 3333: the raw bytes
    decoded as latin-1). gabbi's transport, httpx's WSGITransport, puts the
    path decoded as UTF-8 there, a string no real server passes (for
    ``/%E2%98%83`` a snowman rather than three latin-1 characters)."""
    path = environ.get("PATH_INFO", "")
    try:
        path.encode("latin-1")
    except UnicodeEncodeError:
        environ["PATH_INFO"] = path.encode("utf-8").decode("latin-1")


def setup_app():
    """gabbi's ``intercept``: one application per YAML file."""
    return LazyApp()


#: the variables APIFixture sets to new uuids (Placement's list)
UUID_VARS = (
    "RP_UUID", "RP_NAME", "RP_UUID1", "RP_NAME1", "RP_UUID2", "RP_NAME2",
    "PROJECT_ID", "ADMIN_PROJECT_ID", "SERVICE_PROJECT_ID", "USER_ID",
    "PROJECT_ID_ALT", "USER_ID_ALT", "INSTANCE_UUID", "MIGRATION_UUID",
    "CONSUMER_UUID", "PARENT_PROVIDER_UUID", "ALT_PARENT_PROVIDER_UUID")


def set_env(**values):
    os.environ.update(values)


def _override(conf, group, **values):
    """Set options the application registered; skip those it has not (an
    application without, say, CORS then fails the tests that need it)."""
    for name, value in values.items():
        try:
            conf.set_override(name, value, group)
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            pass


def make_conf(db_url, secure_rbac):
    conf = gantt_fixtures.make_conf(**{"database.connection": db_url})
    conf.register_opts(cors.CORS_OPTS, "cors")
    policy_opts.set_defaults(conf)
    conf.set_override("enforce_new_defaults", secure_rbac, "oslo_policy")
    # no scheduler workers listen in-process
    _override(conf, "api", auth_strategy="noauth2", notify_workers=False)
    return conf


class APIFixture(fixture.GabbiFixture):
    """An empty Gantt database, the application's conf, Placement's
    environment variables."""

    _secure_rbac = False
    _rules = None

    def start_fixture(self):
        global CONF
        self.database = gantt_fixtures.Database(
            os.environ.get("GANTT_GABBITS_DB", "sqlite"))
        self.database.setUp()
        self.db = self.database.db
        self.conf = make_conf(self.database.url, self._secure_rbac)
        self.policy_file = policy_rules.write(self._rules)
        self.conf.set_override("policy_file", self.policy_file,
                               "oslo_policy")
        set_env(**{name: uuidutils.generate_uuid() for name in UUID_VARS})
        set_env(CUSTOM_RES_CLASS="CUSTOM_IRON_NFV",
                CUSTOM_RES_CLASS1="CUSTOM_IRON_NFV1",
                CUSTOM_RES_CLASS2="CUSTOM_IRON_NFV2")
        with world_mod.World.open(self.db) as world:
            self.make_world(world)
        CONF = self.conf

    def make_world(self, world):
        """Subclasses: the providers and allocations of the fixture."""

    def stop_fixture(self):
        global CONF
        CONF = None
        os.unlink(self.policy_file)
        self.conf.reset()
        self.database.cleanUp()


def consumer(project, user):
    return world_mod.Consumer(uuidutils.generate_uuid(), project, user)


class AllocationFixture(APIFixture):
    """One provider (VCPU 10, DISK_GB 2048 in steps of 10) and three
    consumers on it: 1000 DISK_GB, 6 VCPU (same user) and 1 VCPU + 20
    DISK_GB (another user)."""

    def make_world(self, world):
        set_env(ALT_USER_ID=uuidutils.generate_uuid())
        project = os.environ["PROJECT_ID"]
        user, alt_user = os.environ["USER_ID"], os.environ["ALT_USER_ID"]
        rp = world.create_provider(
            os.environ["RP_NAME"], uuid=os.environ["RP_UUID"])
        world.add_inventory(rp, "DISK_GB", 2048, step_size=10, min_unit=10,
                            max_unit=1000)
        world.add_inventory(rp, "VCPU", 10, max_unit=10)
        disk, cpu, alt = (consumer(project, user), consumer(project, user),
                          consumer(project, alt_user))
        world.set_allocation(rp, disk, {"DISK_GB": 1000})
        world.set_allocation(rp, cpu, {"VCPU": 6})
        world.set_allocation(rp, alt, {"DISK_GB": 20, "VCPU": 1})
        set_env(CONSUMER_0=disk.uuid, CONSUMER_ID=cpu.uuid,
                ALT_CONSUMER_ID=alt.uuid,
                ALT_RP_UUID=uuidutils.generate_uuid(),
                ALT_RP_NAME=uuidutils.generate_uuid())


class SharedStorageFixture(APIFixture):
    """Two compute nodes (cn2 with local disk), each with two NUMA nodes
    holding a PF of 8 VFs, and two sharing storage pools, all in one
    aggregate."""

    def make_world(self, world):
        agg = uuidutils.generate_uuid()
        cn1, cn2, ss, ss2 = (world.create_provider(name, agg)
                             for name in ("cn1", "cn2", "ss", "ss2"))
        numas = {name: world.create_provider(name, parent=parent.uuid)
                 for name, parent in (("numa1_1", cn1), ("numa1_2", cn1),
                                      ("numa2_1", cn2), ("numa2_2", cn2))}
        pfs = {"pf" + name[4:]: world.create_provider(
            "pf" + name[4:], parent=numa.uuid)
            for name, numa in numas.items()}
        named = dict(cn1=cn1, cn2=cn2, ss=ss, ss2=ss2, **numas, **pfs)
        set_env(AGG_UUID=agg, **{name.upper() + "_UUID": rp.uuid
                                 for name, rp in named.items()})
        for cn in (cn1, cn2):
            world.add_inventory(cn, "VCPU", 24, allocation_ratio=16.0)
            world.add_inventory(cn, "MEMORY_MB", 128 * 1024,
                                allocation_ratio=1.5)
        world.set_traits(cn1, "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")
        world.add_inventory(cn2, "DISK_GB", 2000, reserved=100)
        for shared in (ss, ss2):
            world.add_inventory(shared, "DISK_GB", 2000, reserved=100)
            world.set_traits(shared, "MISC_SHARES_VIA_AGGREGATE")
        for pf in pfs.values():
            world.add_inventory(pf, "SRIOV_NET_VF", 8)


class NUMAAggregateFixture(APIFixture):
    """Two compute nodes without resources of their own, each with two
    NUMA nodes of 24 VCPU; ss1 shares disk with both (aggregate A), ss2
    with numa1_1 only (aggregate C); cn2 is in aggregate B too."""

    def make_world(self, world):
        agg_a, agg_b, agg_c = (uuidutils.generate_uuid() for _ in "abc")
        cn1 = world.create_provider("cn1", agg_a)
        cn2 = world.create_provider("cn2", agg_a, agg_b)
        ss1 = world.create_provider("ss1", agg_a)
        ss2 = world.create_provider("ss2", agg_c)
        numas = dict(
            numa1_1=world.create_provider("numa1_1", agg_c, parent=cn1.uuid),
            numa1_2=world.create_provider("numa1_2", parent=cn1.uuid),
            numa2_1=world.create_provider("numa2_1", parent=cn2.uuid),
            numa2_2=world.create_provider("numa2_2", parent=cn2.uuid))
        named = dict(cn1=cn1, cn2=cn2, ss1=ss1, ss2=ss2, **numas)
        set_env(AGGA_UUID=agg_a, AGGB_UUID=agg_b, AGGC_UUID=agg_c,
                **{name.upper() + "_UUID": rp.uuid
                   for name, rp in named.items()})
        for numa in numas.values():
            world.add_inventory(numa, "VCPU", 24, allocation_ratio=16.0)
        for ss in (ss1, ss2):
            world.add_inventory(ss, "DISK_GB", 2000, reserved=100)
            world.set_traits(ss, "MISC_SHARES_VIA_AGGREGATE")


class NUMANetworkFixture(APIFixture):
    """cn1: no inventory, two NUMA nodes with FPGAs and a VGPU, an SR-IOV
    and an OVS agent with bandwidth devices; cn2: a flat host with three
    NICs of PFs with VFs; ss1 shares disk with both (see Placement's
    docstring for the picture)."""

    def make_roots(self, world):
        """Providers made before the world: none here (see
        DeepNUMANetworkFixture)."""
        return {}

    def make_world(self, world):
        made = self.make_roots(world)
        agg_a = uuidutils.generate_uuid()
        ss1 = world.create_provider("ss1", agg_a)
        world.set_traits(ss1, "MISC_SHARES_VIA_AGGREGATE")
        world.add_inventory(ss1, "DISK_GB", 2000)
        set_env(AGGA_UUID=agg_a, SS1_UUID=ss1.uuid)
        project, user = "numafx-project", "numafx-user"
        cn1 = made.get("cn1") or world.create_provider("cn1", agg_a)
        set_env(CN1_UUID=cn1.uuid)
        self._make_cn1(world, cn1, agg_a, consumer(project, user))
        cn2 = made.get("cn2") or world.create_provider("cn2")
        self._make_cn2(world, cn2, agg_a, consumer(project, user))
        set_env(CN2_UUID=cn2.uuid)

    def _make_cn1(self, world, cn1, agg_a, used):
        world.set_aggregates(cn1, [agg_a])
        world.set_traits(cn1, "COMPUTE_VOLUME_MULTI_ATTACH")
        numas = [self._numa(world, cn1, i) for i in (0, 1)]
        world.add_inventory(numas[0], "MEMORY_MB", 2048, min_unit=512,
                            step_size=256)
        world.add_inventory(numas[1], "MEMORY_MB", 2048, min_unit=256,
                            max_unit=1024)
        world.set_allocation(numas[0], used, {"VCPU": 2})
        self._device(world, "fpga0", numas[0], "FPGA", 1, "FPGA0_UUID")
        self._device(world, "pgpu0", numas[0], "VGPU", 8, "PGPU0_UUID")
        for i in (0, 1):
            self._device(world, "fpga1_%d" % i, numas[1], "FPGA", 1,
                         "FPGA1_%d_UUID" % i)
        self._agents(world, cn1)

    @staticmethod
    def _numa(world, cn1, i):
        numa = world.create_provider("numa%d" % i, parent=cn1.uuid)
        world.set_traits(numa, "HW_NUMA_ROOT",
                         *(["CUSTOM_FOO"] if i == 1 else []))
        world.add_inventory(numa, "VCPU", 4)
        set_env(**{"NUMA%d_UUID" % i: numa.uuid})
        return numa

    @staticmethod
    def _device(world, name, parent, resource_class, total, var,
                traits=()):
        dev = world.create_provider(name, parent=parent.uuid)
        if traits:
            world.set_traits(dev, *traits)
        if resource_class:
            world.add_inventory(dev, resource_class, total)
        set_env(**{var: dev.uuid})
        return dev

    def _agents(self, world, cn1):
        sriov = self._device(world, "sriov_agent", cn1, None, 0,
                             "SRIOV_AGENT_UUID",
                             traits=["CUSTOM_VNIC_TYPE_DIRECT"])
        for i in (1, 2):
            self._device(world, "esn%d" % i, sriov,
                         "NET_BW_EGR_KILOBIT_PER_SEC", 10000 * i,
                         "ESN%d_UUID" % i, traits=["CUSTOM_PHYSNET%d" % i])
        ovs = self._device(world, "ovs_agent", cn1, None, 0,
                           "OVS_AGENT_UUID",
                           traits=["CUSTOM_VNIC_TYPE_NORMAL"])
        self._device(world, "br_int", ovs, "NET_BW_EGR_KILOBIT_PER_SEC",
                     1000, "BR_INT_UUID", traits=["CUSTOM_PHYSNET0"])

    def _make_cn2(self, world, cn2, agg_a, used):
        world.set_aggregates(cn2, [agg_a])
        world.add_inventory(cn2, "VCPU", 8)
        world.set_allocation(cn2, used, {"VCPU": 3})
        world.add_inventory(cn2, "MEMORY_MB", 2048, min_unit=1024,
                            step_size=128)
        world.add_inventory(cn2, "DISK_GB", 1000)
        world.set_traits(cn2, "CUSTOM_FOO")
        nics = [self._device(world, "nic%d" % i, cn2, None, 0,
                             "NIC%d_UUID" % i,
                             traits=["CUSTOM_HW_NIC_ROOT"])
                for i in (1, 2, 3)]
        # (nic index, pf suffix, physnet, VFs): Placement's PFs
        pfs = [(0, "1_1", 1, 4), (0, "1_2", 2, 4), (1, "2_1", 1, 2),
               (1, "2_2", 2, 2), (1, "2_3", 1, 2), (1, "2_4", 2, 2),
               (2, "3_1", 1, 8)]
        for nic, suffix, physnet, vfs in pfs:
            self._device(world, "pf" + suffix, nics[nic], "CUSTOM_VF", vfs,
                         "PF%s_UUID" % suffix,
                         traits=["CUSTOM_PHYSNET%d" % physnet])


class DeepNUMANetworkFixture(NUMANetworkFixture):
    """NUMANetworkFixture with cn1 and cn2 under p1 and p2, both under
    gp1 (for same_subtree)."""

    def make_roots(self, world):
        gp1 = world.create_provider("gp1")
        p1 = world.create_provider("p1", parent=gp1.uuid)
        p2 = world.create_provider("p2", parent=gp1.uuid)
        return {"cn1": world.create_provider("cn1", parent=p1.uuid),
                "cn2": world.create_provider("cn2", parent=p2.uuid)}


class NonSharedStorageFixture(APIFixture):
    """Three compute nodes with local VCPU, MEMORY_MB and DISK_GB; three
    aggregate uuids in the environment, unused."""

    def make_world(self, world):
        set_env(**{"AGG%s_UUID" % c: uuidutils.generate_uuid()
                   for c in "ABC"})
        for name in ("cn1", "cn2", "cn3"):
            cn = world.create_provider(name)
            set_env(**{name.upper() + "_UUID": cn.uuid})
            world.add_inventory(cn, "VCPU", 24)
            world.add_inventory(cn, "MEMORY_MB", 128 * 1024)
            world.add_inventory(cn, "DISK_GB", 2000)


class CORSFixture(APIFixture):
    """CORS on for http://valid.example.com."""

    def start_fixture(self):
        super().start_fixture()
        self.conf.set_override(
            "allowed_origin", ["http://valid.example.com"], "cors")
        self.conf.set_override(
            "allow_headers", ["openstack-api-version"], "cors")


class GranularFixture(APIFixture):
    """Three compute nodes (left, middle, right), two sharing disks and a
    sharing network pool in aggregates A, B and C (Placement's picture)."""

    def make_world(self, world):
        set_env(AGGA=uuids.aggA, AGGB=uuids.aggB, AGGC=uuids.aggC)
        self._left(world)
        self._middle(world)
        self._right(world)
        self._shared(world)

    @staticmethod
    def _host(world, name, var, aggs, inventories, traits):
        rp = world.create_provider(name, *aggs)
        for rc, total, fields in inventories:
            world.add_inventory(rp, rc, total, **fields)
        world.set_traits(rp, *traits)
        set_env(**{var: rp.uuid})

    def _left(self, world):
        self._host(world, "cn_left", "CN_LEFT", [uuids.aggA], [
            ("VCPU", 8, {}), ("MEMORY_MB", 4096, {}), ("DISK_GB", 500, {}),
            ("VGPU", 8, {}), ("SRIOV_NET_VF", 8, {}),
            ("CUSTOM_NET_MBPS", 4000, {})],
            ["HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_GPU_API_DXVA",
             "HW_NIC_DCB_PFC", "CUSTOM_FOO"])

    def _middle(self, world):
        self._host(world, "cn_middle", "CN_MIDDLE", [uuids.aggA, uuids.aggB],
                   [("VCPU", 8, {}), ("MEMORY_MB", 4096, {}),
                    ("SRIOV_NET_VF", 8, {}), ("CUSTOM_NET_MBPS", 4000, {})],
                   ["HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE",
                    "HW_NIC_ACCEL_TLS"])

    def _right(self, world):
        self._host(world, "cn_right", "CN_RIGHT", [uuids.aggB, uuids.aggC], [
            ("VCPU", 8, {}), ("MEMORY_MB", 4096, {}), ("DISK_GB", 500, {}),
            ("VGPU", 8, {"max_unit": 2})],
            ["HW_CPU_X86_MMX", "HW_GPU_API_DXVA", "CUSTOM_DISK_SSD"])

    def _shared(self, world):
        shares = "MISC_SHARES_VIA_AGGREGATE"
        self._host(world, "shr_disk_1", "SHR_DISK_1", [uuids.aggA],
                   [("DISK_GB", 1000, {})], [shares, "CUSTOM_DISK_SSD"])
        self._host(world, "shr_disk_2", "SHR_DISK_2",
                   [uuids.aggA, uuids.aggB], [("DISK_GB", 1000, {})],
                   [shares])
        self._host(world, "shr_net", "SHR_NET", [uuids.aggC],
                   [("SRIOV_NET_VF", 16, {}),
                    ("CUSTOM_NET_MBPS", 40000, {})], [shares])


class OpenPolicyFixture(APIFixture):
    """Every rule but ``admin_api`` open to anyone (``@``)."""

    _rules = "open"


class SecureRBACPolicyFixture(APIFixture):
    """The new policy defaults and scope enforced."""

    _secure_rbac = True


class LegacyRBACPolicyFixture(APIFixture):
    """The deprecated policy defaults (the APIFixture's)."""

    _secure_rbac = False


#: Neutron's QoS agents' traits (NeutronQoSMultiSegmentFixture)
OVS_TRAITS = ("CUSTOM_VNIC_TYPE_NORMAL",)
SRIOV_TRAITS = ("CUSTOM_VNIC_TYPE_DIRECT", "CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL",
                "CUSTOM_VNIC_TYPE_MACVTAP")


class NeutronQoSMultiSegmentFixture(APIFixture):
    """Four computes as Neutron with QoS minimum bandwidth and packet rate
    reports them on a multi-segment network: compute0 on no segment,
    compute1 on S1, compute2 on S2, compute3 on both with a bridge and a
    PF for each, and less bandwidth. (Placement's fixture sets
    ``compute3:sriov_agent`` to compute2's agent; so does this one.)"""

    # compute: (bridges [(name, physnet)], PFs [(name, physnet)], bandwidth)
    COMPUTES = (
        ("compute0", [("br-ex", "OTHER")],
         [("enp129s0f0", "OTHER")], (5000, 10000)),
        ("compute1", [("br-ex", "MSN_S1")],
         [("enp129s0f0", "MSN_S1")], (5000, 10000)),
        ("compute2", [("br-ex", "MSN_S2")],
         [("enp129s0f0", "MSN_S2")], (5000, 10000)),
        ("compute3", [("br-ex", "MSN_S1"), ("br-ex2", "MSN_S2")],
         [("enp129s0f0", "MSN_S1"), ("enp129s0f1", "MSN_S2")],
         (1000, 1000)),
    )

    def make_world(self, world):
        agents = {}
        for name, bridges, pfs, (bridge_bw, pf_bw) in self.COMPUTES:
            cn = world.create_provider(name)
            set_env(**{name: cn.uuid})
            for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096),
                              ("DISK_GB", 500)):
                world.add_inventory(cn, rc, total)
            self._ovs(world, cn, bridges, bridge_bw)
            agents[name] = self._sriov(world, cn, pfs, pf_bw)
        set_env(**{"compute3:sriov_agent": agents["compute2"].uuid})

    @staticmethod
    def _bandwidth(world, rp, total):
        for rc in ("NET_BW_EGR_KILOBIT_PER_SEC",
                   "NET_BW_IGR_KILOBIT_PER_SEC"):
            world.add_inventory(rp, rc, total)

    def _ovs(self, world, cn, bridges, bandwidth):
        agent = world.create_provider(
            cn.name + ":Open vSwitch agent", parent=cn.uuid)
        set_env(**{cn.name + ":ovs_agent": agent.uuid})
        world.add_inventory(agent, "NET_PACKET_RATE_KILOPACKET_PER_SEC", 1000)
        world.set_traits(agent, *OVS_TRAITS)
        for i, (bridge, physnet) in enumerate(bridges):
            br = world.create_provider(
                agent.name + ":" + bridge, parent=agent.uuid)
            set_env(**{cn.name + ":br_ex" + (str(i + 1) if i else ""):
                       br.uuid})
            self._bandwidth(world, br, bandwidth)
            world.set_traits(br, *OVS_TRAITS, "CUSTOM_PHYSNET_" + physnet)

    def _sriov(self, world, cn, pfs, bandwidth):
        agent = world.create_provider(
            cn.name + ":NIC Switch agent", parent=cn.uuid)
        set_env(**{cn.name + ":sriov_agent": agent.uuid})
        world.set_traits(agent, *SRIOV_TRAITS)
        for i, (device, physnet) in enumerate(pfs):
            pf = world.create_provider(
                agent.name + ":" + device, parent=agent.uuid)
            set_env(**{"%s:pf%d" % (cn.name, i): pf.uuid})
            self._bandwidth(world, pf, bandwidth)
            world.set_traits(pf, *SRIOV_TRAITS, "CUSTOM_PHYSNET_" + physnet)
        return agent
