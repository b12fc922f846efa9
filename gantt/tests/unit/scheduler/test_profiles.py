"""Scheduling profiles: built from config, chosen per request, refused
when wrong (at start and per request) with nothing changed."""

import pytest

from gantt import exception
from gantt import scheduler as scheduler_mod
from gantt.cmd import common
from gantt.objects import request_spec
from gantt.scheduler.pipeline import profiles
from gantt.tests import factories
from gantt.tests.unit.scheduler import service_helpers as h

VOLUME = ("[profile:volume]\nprovider_kinds = volume\n"
          "enabled_filters = ResourceFilter,AvailabilityZoneFilter\n"
          "enabled_weighers = BalancedAllocationWeigher\n")


def _conf(tmp_path, text):
    path = tmp_path / "gantt.conf"
    path.write_text(text)
    return common.parse_args(["--config-file", str(path)], log=False)


def _scheduler(tmp_path, sqlite_db, text):
    conf = _conf(tmp_path, text)
    conf.set_override("connection", sqlite_db.url, "database")
    mgr = scheduler_mod.build(conf, sqlite_db)
    mgr.stats.load_cache()
    return mgr


def _refused(tmp_path, text):
    with pytest.raises(exception.ConfigurationError) as raised:
        profiles.build(_conf(tmp_path, text))
    return str(raised.value)


# -- built from config ------------------------------------------------------


def test_the_default_profile_is_filter_scheduler_itself(tmp_path):
    conf = _conf(tmp_path, "[filter_scheduler]\npacking =\n")
    routes = profiles.build(conf)
    assert list(routes.profiles) == ["default"]
    route = routes.default
    # Nova's behaviour exactly: the plugins read the configuration itself
    assert route.pipeline.conf is conf
    assert route.pipeline.profile == "default"
    assert route.pipeline.packing is None
    assert route.profile.provider_kinds == frozenset({"compute"})


def test_an_option_a_profile_leaves_unset_is_filter_schedulers_value(
        tmp_path):
    conf = _conf(tmp_path, "[scheduler]\nprofiles = a\n"
                           "[filter_scheduler]\npacking =\n"
                           "ram_weight_multiplier = 3.0\n"
                           "cpu_weight_multiplier = 2.0\n"
                           "[profile:a]\ncpu_weight_multiplier = -4.0\n")
    routes = profiles.build(conf)
    fs = routes.profiles and profiles.profile_conf(
        conf, routes.profiles["a"], None).filter_scheduler
    assert fs.ram_weight_multiplier == 3.0      # not the default, 1.0
    assert fs.cpu_weight_multiplier == -4.0     # its own
    assert fs["cpu_weight_multiplier"] == -4.0  # as weighers read it
    # the other groups are the configuration's
    view = profiles.profile_conf(conf, routes.profiles["a"], None)
    assert view.scheduler.max_attempts == conf.scheduler.max_attempts
    assert view["scheduler"] is conf["scheduler"]


def test_a_packing_policy_lays_its_values_over_the_profiles(tmp_path):
    conf = _conf(tmp_path, "[scheduler]\nprofiles = packed\n"
                           "[profile:packed]\npacking = balanced+stack\n"
                           "ram_weight_multiplier = 7.0\n"
                           "enabled_weighers = RAMWeigher,CPUWeigher\n")
    route = profiles.build(conf).for_request(_record("packed",
                                                     "balanced+stack"))
    fs = route.pipeline.conf.filter_scheduler
    assert fs.ram_weight_multiplier == -1.0
    assert fs.balanced_allocation_weight_multiplier == 5.0
    assert route.pipeline.weigher_names == [
        "RAMWeigher", "CPUWeigher", "BalancedAllocationWeigher"]
    # the weighers read the policy's multiplier
    ram = route.pipeline.weighers.weighers[0]
    assert ram.config_multiplier() == -1.0


def _record(profile, packing):
    return type("Request", (), {"profile": profile, "packing": packing})()


def test_a_request_may_choose_a_policy_only_where_allowed(tmp_path):
    conf = _conf(tmp_path, "[scheduler]\nprofiles = open\n"
                           "[filter_scheduler]\npacking = stack\n"
                           "[profile:open]\nrequest_packing = true\n")
    routes = profiles.build(conf)
    assert set(profiles.packings(routes.profiles["default"])) == {"stack"}
    # the open profile inherits stack, and may be asked for any other
    assert set(profiles.packings(routes.profiles["open"])) == {
        "stack", "spread", "stack-ram", "balanced", "balanced+stack"}
    spread = routes.for_request(_record("open", "spread"))
    assert spread.pipeline.conf.filter_scheduler.ram_weight_multiplier == 1.0


@pytest.mark.parametrize("text, message", [
    ("[scheduler]\nprofiles = a\n[profile:a]\nenabled_filters = NoSuch\n",
     "profile a: unknown filters NoSuch; known: "),
    ("[scheduler]\nprofiles = a\n[profile:a]\nenabled_weighers = Nope\n",
     "profile a: unknown weighers Nope; known: "),
    ("[scheduler]\nprofiles = a\n[profile:a]\npacking = tetris\n",
     "[profile:a] packing: unknown policy 'tetris'; known: spread, "),
    ("[filter_scheduler]\npacking = tetris\n",
     "[filter_scheduler] packing: unknown policy 'tetris'"),
    ("[scheduler]\nprofiles = a\n[profile:a]\nprovider_kinds = Disk!\n",
     "[profile:a] provider_kinds: not a kind: Disk!; a kind is a "),
    ("[scheduler]\nprofiles = default\n", "'default' is [filter_scheduler]"),
    ("[scheduler]\nprofiles = a,a\n", "lists a more than once"),
    ("[scheduler]\nprofiles = a\n[profile:a]\nram_weight_multiplier = x\n",
     "[profile:a]: cannot read ram_weight_multiplier"),
])
def test_a_wrong_profile_stops_the_service_at_start(tmp_path, text,
                                                    message):
    assert message in _refused(tmp_path, text)


def test_a_plugin_that_does_not_apply_to_a_profiles_kind_is_refused(
        tmp_path):
    # the volume profile left enabled_filters unset: Nova's compute filters
    message = _refused(tmp_path, "[scheduler]\nprofiles = volume\n"
                                 "[profile:volume]\nprovider_kinds = volume\n")
    assert "profile volume considers volume providers, but ComputeFilter, " \
           "ComputeCapabilitiesFilter, ImagePropertiesFilter, " \
           "NUMATopologyFilter, PciPassthroughFilter apply only to " \
           "compute; set enabled_filters and enabled_weighers in " \
           "[profile:volume]" in message
    # generic plugins apply to every kind
    routes = profiles.build(_conf(tmp_path, "[scheduler]\nprofiles = volume\n"
                                  + VOLUME))
    assert routes.profiles["volume"].provider_kinds == frozenset({"volume"})


def test_a_compute_only_weigher_is_refused_in_a_volume_profile(tmp_path):
    message = _refused(tmp_path, "[scheduler]\nprofiles = volume\n" + VOLUME
                       + "enabled_weighers = RAMWeigher,IoOpsWeigher\n")
    assert "but IoOpsWeigher apply only to compute" in message


# -- chosen per request -----------------------------------------------------

TWO = ("[scheduler]\nprofiles = packed\n"
       "[filter_scheduler]\npacking =\nrequest_packing = false\n"
       "[profile:packed]\npacking = stack\n")


def _two_hosts(mgr):
    # "big" has the most free of everything: spreading picks it, stacking
    # the fuller "small"
    h.sized(mgr, "small", 1)
    h.sized(mgr, "big", 4)


def _placed(mgr, **fields):
    [[claimed, *_]] = h.select(mgr, spec=h.make_spec(**fields))
    return claimed.service_host


def test_the_same_request_lands_by_the_profile_it_names(tmp_path,
                                                        sqlite_db):
    mgr = _scheduler(tmp_path, sqlite_db, TWO)
    _two_hosts(mgr)
    assert _placed(mgr) == "big"
    assert _placed(mgr, profile="default") == "big"
    assert _placed(mgr, profile="packed") == "small"


def test_an_unknown_profile_is_refused_and_changes_nothing(tmp_path,
                                                           sqlite_db):
    mgr = _scheduler(tmp_path, sqlite_db, TWO)
    _two_hosts(mgr)
    before = h.db_snapshot(sqlite_db)
    with pytest.raises(exception.UnknownProfile) as raised:
        _placed(mgr, profile="volume")
    assert isinstance(raised.value, exception.InvalidRequest)
    assert str(raised.value) == ("Unknown scheduling profile volume; this "
                                 "scheduler has: default, packed")
    assert h.db_snapshot(sqlite_db) == before
    with pytest.raises(exception.UnknownProfile):
        mgr.operator.explain(h.make_spec(profile="volume"))


@pytest.mark.parametrize("profile, packing, reason", [
    (None, "stack", "profile default does not let requests choose their "
                    "packing (request_packing)"),
    ("open", "tetris", "no such policy; known: spread, stack-ram, stack, "),
])
def test_a_packing_policy_a_request_may_not_name_is_refused(
        tmp_path, sqlite_db, profile, packing, reason):
    mgr = _scheduler(tmp_path, sqlite_db, TWO.replace(
        "profiles = packed", "profiles = packed,open")
        + "[profile:open]\nrequest_packing = true\n")
    _two_hosts(mgr)
    before = h.db_snapshot(sqlite_db)
    with pytest.raises(exception.PackingRefused) as raised:
        _placed(mgr, profile=profile, packing=packing)
    assert reason in str(raised.value)
    assert h.db_snapshot(sqlite_db) == before


def test_a_request_chooses_its_packing_where_its_profile_allows(
        tmp_path, sqlite_db):
    mgr = _scheduler(tmp_path, sqlite_db,
                     "[filter_scheduler]\npacking =\nrequest_packing = true\n")
    _two_hosts(mgr)
    assert _placed(mgr) == "big"
    assert _placed(mgr, packing="stack") == "small"
    assert _placed(mgr, packing="spread") == "big"
    explained = mgr.operator.explain(h.make_spec(packing="stack"))
    assert (explained.profile, explained.packing) == ("default", "stack")
    assert explained.weighed[0].host == "small"


def test_explain_names_the_profile_and_packing_that_ranked(tmp_path,
                                                           sqlite_db):
    mgr = _scheduler(tmp_path, sqlite_db, TWO)
    _two_hosts(mgr)
    explained = mgr.operator.explain(h.make_spec(profile="packed"))
    assert (explained.profile, explained.packing) == ("packed", "stack")
    assert explained.weighed[0].host == "small"
    default = mgr.operator.explain(h.make_spec())
    assert (default.profile, default.packing) == ("default", None)


def test_allocation_candidates_follow_the_requests_profile(tmp_path,
                                                           sqlite_db):
    mgr = _scheduler(tmp_path, sqlite_db, TWO)
    _two_hosts(mgr)
    [best, _] = mgr.placer.get_allocation_candidates(
        h.make_spec(profile="packed"))
    assert best.root_provider_uuid == factories.host_uuid("small")
    [best, _] = mgr.placer.get_allocation_candidates(h.make_spec())
    assert best.root_provider_uuid == factories.host_uuid("big")


# -- requests without a flavor ----------------------------------------------


def _flavorless(**fields):
    return request_spec.RequestSpec(
        request_groups=[request_spec.RequestGroup(
            suffix="", resources={"VCPU": 2, "MEMORY_MB": 512})], **fields)


def test_a_request_without_a_flavor_asks_for_its_groups_only(scheduler):
    h.sized(scheduler, "h1", 1)
    [[claimed, *_]] = h.select(scheduler, spec=_flavorless(
        capabilities={"thin_provisioning_support": "<is> True"}))
    assert claimed.allocation_request.as_mapping() == {
        factories.host_uuid("h1"): {"VCPU": 2, "MEMORY_MB": 512}}


def test_the_record_carries_profile_kinds_and_capabilities(tmp_path,
                                                           sqlite_db):
    mgr = _scheduler(tmp_path, sqlite_db,
                     "[scheduler]\nprofiles = volume\n" + VOLUME)
    cycle = mgr.placer.cycle(_flavorless(
        profile="volume", capabilities={"thin_provisioning_support":
                                        "<is> True"}), factories.uuids(1))
    request = cycle.request
    assert request.profile == "volume"
    assert request.packing is None
    assert request.provider_kinds == frozenset({"volume"})
    assert request.capabilities == {"thin_provisioning_support": "<is> True"}
    assert request.resources == {"VCPU": 2, "MEMORY_MB": 512}
    assert request.extra_specs == {}
    # a Nova-shaped request: the default profile's kinds
    nova = mgr.placer.cycle(h.make_spec(), factories.uuids(1)).request
    assert (nova.profile, nova.provider_kinds) == (
        "default", frozenset({"compute"}))


def test_a_flavorless_request_with_no_resources_is_invalid(scheduler):
    h.sized(scheduler, "h1", 1)
    with pytest.raises(exception.InvalidRequest, match="no resources"):
        h.select(scheduler, spec=request_spec.RequestSpec(profile=None))


# -- a shipped default policy and weighers set by hand ----------------------


def _shipped(conf, policy="balanced+stack"):
    # as a release (or a packager) ships it, not as the operator sets it
    conf.set_default("packing", policy, "filter_scheduler")
    return profiles.build(conf)


def test_a_shipped_default_policy_applies_where_nothing_was_tuned(tmp_path):
    routes = _shipped(_conf(tmp_path, ""))
    assert routes.default.packing == "balanced+stack"
    assert routes.default.pipeline.conf.filter_scheduler \
        .ram_weight_multiplier == -1.0


@pytest.mark.parametrize("text", [
    "[filter_scheduler]\nram_weight_multiplier = 2.0\n",
    "[filter_scheduler]\nenabled_weighers = RAMWeigher\n",
])
def test_weighers_set_by_hand_keep_novas_meaning(tmp_path, text):
    conf = _conf(tmp_path, text)
    route = _shipped(conf).default
    assert route.packing is None
    assert route.pipeline.conf is conf


def test_a_policy_the_operator_names_applies_over_tuned_weighers(tmp_path):
    conf = _conf(tmp_path, "[filter_scheduler]\npacking = stack\n"
                           "ram_weight_multiplier = 2.0\n")
    route = _shipped(conf).default
    assert route.packing == "stack"
    assert route.pipeline.conf.filter_scheduler.ram_weight_multiplier == -1.0


def test_a_profile_tuning_its_weighers_keeps_them(tmp_path):
    conf = _conf(tmp_path, "[scheduler]\nprofiles = a,b\n"
                           "[profile:a]\ncpu_weight_multiplier = 3.0\n")
    routes = _shipped(conf)
    assert routes.profiles["a"].packing is None
    assert routes.profiles["b"].packing == "balanced+stack"


# -- Gantt's default profile packs ------------------------------------------


def test_gantts_default_profile_packs(scheduler):
    """Without any weigher option set, the default profile follows the
    shipped policy, balanced+stack: the fullest host whose classes stay
    evenly used (Nova's weighers would take the roomiest)."""
    route = scheduler.placer.routes.default
    assert route.packing == "balanced+stack"
    _two_hosts(scheduler)
    assert _placed(scheduler) == "small"
    # balance: of two hosts as full, the RAM-heavy flavor goes where the
    # CPUs are used, not where RAM already is
    h.report(scheduler, "cpu-used", vcpus=16, memory_mb=65536, disk_gb=0)
    h.report(scheduler, "ram-used", vcpus=16, memory_mb=65536, disk_gb=0)
    for host, flavor in (("cpu-used", dict(vcpus=8, memory_mb=4096)),
                         ("ram-used", dict(vcpus=1, memory_mb=32768))):
        h.select(scheduler, spec=h.make_spec(
            factories.flavor(root_gb=0, **flavor), force_hosts=[host]))
    ram_heavy = h.make_spec(factories.flavor(vcpus=1, memory_mb=16384,
                                             root_gb=0))
    explained = scheduler.operator.explain(ram_heavy)
    assert (explained.profile, explained.packing) == (
        "default", "balanced+stack")
    assert explained.weighed[0].host == "cpu-used"
