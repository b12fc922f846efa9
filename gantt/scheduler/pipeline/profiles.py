"""Scheduling profiles, built: a pipeline per profile and packing policy.

A profile (``[scheduler] profiles``, ``[profile:NAME]``, see
:mod:`gantt.conf.profiles`) names its filters, weighers and multipliers,
the provider kinds its requests consider, its packing policy and whether
a request may choose another. Its plugins read
``conf.filter_scheduler.X`` as every plugin does: they are handed a
:class:`ProfileConf` whose ``filter_scheduler`` is the profile's options
(its own, else ``[filter_scheduler]``'s) with the packing policy's values
laid over them (:func:`.packing.settings`). The default profile without
a packing policy is handed the configuration itself: Nova's behaviour,
exactly.

:func:`build` makes one :class:`Route` (pipeline, allocation-candidates
pipeline, picker) per profile, and per packing policy a request of that
profile may choose; everything wrong in the configuration stops it with
a ConfigurationError. :func:`profile_of` checks a request's profile and
packing (translate calls it); :meth:`Routes.for_request` then finds its
route.
"""

import dataclasses
import logging
import random

from oslo_config import cfg

from gantt import exception
from gantt.conf import profiles as conf_profiles
from gantt.objects import provider as provider_obj
from gantt.scheduler.pipeline import filters as filters_base
from gantt.scheduler.pipeline import packing as packing_mod
from gantt.scheduler.pipeline import picking
from gantt.scheduler.pipeline import pipeline as pipeline_mod
from gantt.scheduler.pipeline import plugins
from gantt.scheduler.pipeline import request as request_mod
from gantt.scheduler.pipeline import weighers as weighers_base
from gantt.scheduler.pipeline.filters import resources as resource_filter

DEFAULT = conf_profiles.DEFAULT

LOG = logging.getLogger(__name__)


def packings(profile):
    """Every policy a request of ``profile`` may be ranked by (None: the
    weighers as configured)."""
    chosen = [profile.packing]
    if profile.request_packing:
        chosen += [p for p in packing_mod.POLICIES if p != profile.packing]
    return chosen


class ProfileGroup:
    """``[filter_scheduler]`` as one profile's plugins read it: the
    policy's values, else the profile's own, else ``[filter_scheduler]``'s.
    """

    def __init__(self, conf, profile, overrides):
        self._conf = conf
        self._profile = profile
        self._overrides = dict(overrides)

    def __getattr__(self, option):
        if option.startswith("_"):
            raise AttributeError(option)
        if option in self._overrides:
            return self._overrides[option]
        return conf_profiles.value(self._conf, self._profile, option)

    __getitem__ = __getattr__


class ProfileConf:
    """The configuration as one profile's plugins see it: every group as
    configured, but ``filter_scheduler`` is the profile's."""

    def __init__(self, conf, group):
        self._conf = conf
        self.filter_scheduler = group

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._conf, name)

    def __getitem__(self, name):
        if name == "filter_scheduler":
            return self.filter_scheduler
        return self._conf[name]


@dataclasses.dataclass(frozen=True)
class Route:
    """What ranks and picks for requests of one profile and policy."""

    profile: request_mod.Profile
    packing: str | None
    pipeline: pipeline_mod.Pipeline
    fit_pipeline: pipeline_mod.Pipeline
    picker: picking.Picker


class Routes:
    """Every route, by (profile name, packing policy or None)."""

    def __init__(self, routes, profiles):
        self._routes = dict(routes)
        #: profile name -> :class:`.request.Profile`
        self.profiles = dict(profiles)

    @property
    def default(self):
        return self._routes[(DEFAULT, self.profiles[DEFAULT].packing)]

    def for_request(self, request):
        """The route of a translated request (its profile and packing
        were checked against :attr:`profiles` by translate)."""
        return self._routes[(request.profile, request.packing)]


#: what a request sees when the scheduler has only Nova's profile
NOVA_PROFILES = {DEFAULT: request_mod.Profile(
    DEFAULT, frozenset({"compute"}), None, False)}


def profile_of(spec, profiles):
    """(the spec's Profile, the packing policy that ranks it or None):
    what translate checks of a request's profile and packing.

    :raises: UnknownProfile, PackingRefused
    """
    name = spec.profile or DEFAULT
    profile = profiles.get(name)
    if profile is None:
        raise exception.UnknownProfile(profile=name,
                                       known=", ".join(profiles))
    packing = spec.packing
    if packing is None or packing == profile.packing:
        return profile, profile.packing
    if packing not in packing_mod.POLICIES:
        raise exception.PackingRefused(
            packing=packing, reason="no such policy; known: %s"
            % ", ".join(packing_mod.POLICIES))
    if not profile.request_packing:
        raise exception.PackingRefused(
            packing=packing, reason="profile %s does not let requests "
            "choose their packing (request_packing)" % name)
    return profile, packing


def _setting(conf, name, option):
    try:
        return conf_profiles.value(conf, name, option)
    except ValueError as exc:
        raise exception.ConfigurationError(
            reason="[%s] %s: %s" % (conf_profiles.group_name(name), option,
                                    exc)) from None


def _check_readable(conf, name):
    """Every option of a profile's group can be read (the daemon's
    check of values does not know these groups: they are registered
    here)."""
    if name == DEFAULT:
        return
    group = conf[conf_profiles.group_name(name)]
    bad = []
    for opt in conf_profiles.PROFILE_OPTS:
        try:
            group[opt.dest]
        except (ValueError, cfg.Error) as exc:
            bad.append("%s (%s)" % (opt.dest, exc))
    if bad:
        raise exception.ConfigurationError(
            reason="[%s]: cannot read %s" % (
                conf_profiles.group_name(name), "; ".join(bad)))


def _profile(conf, name):
    where = "[%s]" % conf_profiles.group_name(name)
    kinds = frozenset(_setting(conf, name, "provider_kinds"))
    # the set of kinds is open, as providers' reports are: any name a
    # provider could report (and compute)
    wrong = sorted(k for k in kinds if k != provider_obj.COMPUTE
                   and provider_obj.kind_error(k))
    if wrong or not kinds:
        raise exception.ConfigurationError(
            reason="%s provider_kinds: %s; a kind is a lower-case "
                   "identifier such as %s" % (
                where, "not a kind: " + ", ".join(wrong) if wrong
                else "empty", ", ".join(conf_profiles.PROVIDER_KINDS)))
    packing = _setting(conf, name, "packing") or None
    if packing is not None and packing not in packing_mod.POLICIES:
        raise exception.ConfigurationError(
            reason="%s packing: unknown policy %r; known: %s" % (
                where, packing, ", ".join(packing_mod.POLICIES)))
    if packing is not None and not _chosen(conf, name, "packing"):
        tuned = _tuned(conf, name, packing)
        if tuned:
            # the shipped default yields to weighers set by hand: those
            # options keep Nova's meaning
            LOG.info("Profile %s: %s set by hand, so the default packing "
                     "policy %s is not applied (set packing to apply it)",
                     name, ", ".join(tuned), packing)
            packing = None
    return request_mod.Profile(name, kinds, packing,
                   bool(_setting(conf, name, "request_packing")))


def _groups(name):
    """The option groups a profile's values come from, its own first."""
    if name == DEFAULT:
        return [conf_profiles.group_name(DEFAULT)]
    return [conf_profiles.group_name(name),
            conf_profiles.group_name(DEFAULT)]


def _chosen(conf, name, option):
    """Whether the operator (or a test's override) set ``option`` for
    profile ``name``, rather than leaving the shipped default (the
    option's, or one a packager set with ``set_default``)."""
    for group in _groups(name):
        # (no location: an option of no default that nothing set)
        found = conf.get_location(option, group)
        if found is not None and found.location not in _SHIPPED:
            return True
    return False


_SHIPPED = (cfg.Locations.opt_default, cfg.Locations.set_default)


def _tuned(conf, name, packing):
    """The options ``packing`` would replace that were set by hand."""
    return sorted(option for option in packing_mod.settings(packing, ())
                  if _chosen(conf, name, option))


def profile_conf(conf, profile, packing):
    """The configuration ``profile``'s plugins read under ``packing``."""
    if profile.name == DEFAULT and packing is None:
        return conf
    overrides = {}
    if packing is not None:
        overrides = packing_mod.settings(packing, conf_profiles.value(
            conf, profile.name, "enabled_weighers"))
    return ProfileConf(conf, ProfileGroup(conf, profile.name, overrides))


def _check_kinds(profile, loaded):
    """Every plugin applies to every kind the profile considers."""
    wrong = [p for p in loaded if p.provider_kinds is not None
             and not profile.provider_kinds <= p.provider_kinds]
    if wrong:
        raise exception.ConfigurationError(
            reason="profile %s considers %s providers, but %s apply only "
                   "to %s; set enabled_filters and enabled_weighers in [%s]"
            % (profile.name, ", ".join(sorted(profile.provider_kinds)),
               ", ".join(p.name for p in wrong),
               "; ".join(sorted({", ".join(sorted(p.provider_kinds))
                                 for p in wrong})),
               conf_profiles.group_name(profile.name)))


def _load(namespace, conf, option, profile):
    try:
        return plugins.load(namespace, conf.filter_scheduler[option], conf)
    except exception.ConfigurationError as exc:
        raise exception.ConfigurationError(
            reason="profile %s: %s" % (profile.name, exc.kwargs.get(
                "reason", exc))) from None


def _routes_of(conf, profile, rng):
    """Each route of ``profile``, by packing policy."""
    base = profile_conf(conf, profile, None)
    filters = _load(plugins.FILTERS, base, "enabled_filters", profile)
    _check_kinds(profile, filters)
    runner = filters_base.FilterRunner(filters)
    for packing in packings(profile):
        view = profile_conf(conf, profile, packing)
        loaded = _load(plugins.WEIGHERS, view, "enabled_weighers", profile)
        _check_kinds(profile, loaded)
        weighers = weighers_base.WeigherRunner(loaded)
        named = dict(profile=profile.name, packing=packing)
        yield packing, Route(
            profile, packing,
            pipeline_mod.Pipeline(runner, weighers, view, **named),
            # Placement's allocation candidates: the resource rule alone,
            # no Nova filter, the same weighers
            pipeline_mod.Pipeline(filters_base.FilterRunner(
                [resource_filter.ResourceFilter(view)]), weighers, view,
                **named),
            picking.Picker(view, rng))


def build(conf, rng=None):
    """Every profile's routes.

    :param rng: the random source of picking, shared by every route (by
        default a new one)
    :raises: ConfigurationError for an unknown or repeated profile, an
        unknown plugin, packing policy or provider kind, or a plugin that
        does not apply to a kind its profile considers
    """
    try:
        names = conf_profiles.register(conf)
    except ValueError as exc:
        raise exception.ConfigurationError(reason=str(exc)) from None
    rng = rng or random.Random()
    routes, found = {}, {}
    for name in names:
        _check_readable(conf, name)
        profile = found[name] = _profile(conf, name)
        for packing, route in _routes_of(conf, profile, rng):
            routes[(name, packing)] = route
        own = routes[(name, profile.packing)].pipeline
        LOG.info("Profile %s: %s providers, packing %s%s; filters: %s; "
                 "weighers: %s", name, ",".join(sorted(
                     profile.provider_kinds)), profile.packing or "none",
                 " (requests may choose)" if profile.request_packing
                 else "", ", ".join(own.filter_names),
                 ", ".join(own.weigher_names))
    return Routes(routes, found)
