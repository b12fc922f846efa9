"""A request's NUMA constraints: its CPU policy and guest topology from a
flavor's ``hw:`` extra specs and an image's ``hw_`` properties, validated
as Nova's ``numa_get_constraints`` validates them (see the package
docstring for the rules).
"""

import re

from oslo_utils import strutils

from gantt import exception
from gantt.scheduler.state.numa.model import ANY
from gantt.scheduler.state.numa.model import CPU_POLICIES
from gantt.scheduler.state.numa.model import DEDICATED
from gantt.scheduler.state.numa.model import EMULATOR_POLICIES
from gantt.scheduler.state.numa.model import HYPERTHREADING
from gantt.scheduler.state.numa.model import ISOLATE
from gantt.scheduler.state.numa.model import LARGE
from gantt.scheduler.state.numa.model import MIXED
from gantt.scheduler.state.numa.model import PREFER
from gantt.scheduler.state.numa.model import REQUIRE
from gantt.scheduler.state.numa.model import SHARED
from gantt.scheduler.state.numa.model import SMALL
from gantt.scheduler.state.numa.model import THREAD_POLICIES
from gantt.scheduler.state.numa.model import CpuRequest
from gantt.scheduler.state.numa.model import GuestCell
from gantt.scheduler.state.numa.model import GuestTopology

_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$", re.IGNORECASE)
_UNITS_KB = {"": 1, "K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}
_SUFFIX = r"([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?"
_CPU_RESOURCES = re.compile(r"^resources%s:(VCPU|PCPU)$" % _SUFFIX)
_HT_TRAIT = re.compile(r"^trait%s:%s$" % (_SUFFIX, HYPERTHREADING))


def _clean(value):
    return None if value in (None, "") else str(value).strip()


def _setting(extra_specs, image_props, flavor_key, image_key):
    value = _clean(extra_specs.get(flavor_key))
    return value if value is not None else _clean(image_props.get(image_key))


def _invalid(reason, *args):
    return exception.InvalidRequest(reason=reason % args)


def parse_page_size(text):
    """``small``/``large``/``any`` or a size (``2048``, ``2MB``, ``1GiB``)
    as KiB."""
    lowered = text.lower()
    if lowered in (SMALL, LARGE, ANY):
        return lowered
    match = _SIZE.match(text)
    if not match or int(match.group(1)) <= 0:
        raise _invalid("hw:mem_page_size must be small, large, any or a size "
                       "such as 2048, 2MB or 1GB; got %r", text)
    return int(match.group(1)) * _UNITS_KB[match.group(2).upper()]


def parse_cpu_spec(text, what="CPU list"):
    """Nova's CPU list syntax: ``0-3,^2,5`` -> {0, 1, 3, 5}."""
    include, exclude = set(), set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        target = include
        if part.startswith("^"):
            target, part = exclude, part[1:]
        try:
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                if low > high:
                    raise ValueError(part)
                target.update(range(low, high + 1))
            else:
                target.add(int(part))
        except ValueError:
            raise _invalid("invalid %s %r", what, text) from None
    return include - exclude


def _positive(value, what):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise _invalid("%s must be a positive integer, got %r", what, value)
    return number


def _choice(value, allowed, what):
    if value is not None and value not in allowed:
        raise _invalid("%s %r is not supported (%s)", what, value,
                       ", ".join(allowed))
    return value


def _cpu_policy(specs, image_props):
    flavor = _choice(_clean(specs.get("hw:cpu_policy")), CPU_POLICIES,
                     "hw:cpu_policy")
    image = _choice(_clean(image_props.get("hw_cpu_policy")), CPU_POLICIES,
                    "hw_cpu_policy")
    # what a flavor's policy forbids an image to ask for (images are the
    # users', flavors the operator's: Nova's ImageCPUPinningForbidden)
    forbidden = {SHARED: (DEDICATED, MIXED), MIXED: (DEDICATED,)}
    if flavor in forbidden and image in forbidden[flavor]:
        raise _invalid("image property hw_cpu_policy=%s is not allowed with "
                       "the flavor's hw:cpu_policy=%s", image, flavor)
    return flavor if flavor is not None else image


def _thread_policy(specs, image_props):
    flavor = _choice(_clean(specs.get("hw:cpu_thread_policy")),
                     THREAD_POLICIES, "hw:cpu_thread_policy")
    image = _choice(_clean(image_props.get("hw_cpu_thread_policy")),
                    THREAD_POLICIES, "hw_cpu_thread_policy")
    if flavor in (None, PREFER):
        return image or flavor
    if image is not None and image != flavor:
        raise _invalid("image property hw_cpu_thread_policy=%s is not "
                       "allowed with the flavor's hw:cpu_thread_policy=%s",
                       image, flavor)
    return flavor


def _realtime_cpus(flavor, image_props, emulator):
    """The realtime vCPUs (``hw:cpu_realtime``), or None."""
    specs = flavor.extra_specs
    if not strutils.bool_from_string(specs.get("hw:cpu_realtime")):
        return None
    # the image's mask first, as in Nova
    mask = (_clean(image_props.get("hw_cpu_realtime_mask"))
            or _clean(specs.get("hw:cpu_realtime_mask")))
    every = set(range(flavor.vcpus))
    realtime = every
    if mask:
        realtime = parse_cpu_spec("0-%d,%s" % (flavor.vcpus - 1, mask),
                                  "hw:cpu_realtime_mask")
    if not realtime or not realtime <= every:
        raise _invalid("hw:cpu_realtime_mask %r must name some of vCPUs "
                       "0-%d", mask, flavor.vcpus - 1)
    if realtime == every and emulator is None:
        raise _invalid("hw:cpu_realtime_mask %r leaves no vCPU for the "
                       "emulator threads; exclude one (^0) or set "
                       "hw:emulator_threads_policy", mask)
    return frozenset(realtime)


def _dedicated_mask(flavor):
    """The vCPUs of ``hw:cpu_dedicated_mask``, or None."""
    mask = _clean(flavor.extra_specs.get("hw:cpu_dedicated_mask"))
    if mask is None:
        return None
    vcpus = flavor.vcpus
    text = "0-%d,%s" % (vcpus - 1, mask) if mask.startswith("^") else mask
    pinned = parse_cpu_spec(text, "hw:cpu_dedicated_mask")
    every = set(range(vcpus))
    if not pinned <= every:
        raise _invalid("hw:cpu_dedicated_mask %r names vCPU(s) %s; the "
                       "flavor has vCPUs 0-%d", mask,
                       ",".join(map(str, sorted(pinned - every))), vcpus - 1)
    if not pinned or pinned == every:
        raise _invalid("hw:cpu_dedicated_mask %r must leave at least one "
                       "dedicated and one shared vCPU", mask)
    return frozenset(pinned)


def _explicit_policy(specs, policy, emulator, vcpus):
    """``(policy, translate)`` once ``resources[N]:VCPU/PCPU`` are read."""
    amounts = {"VCPU": 0, "PCPU": 0}
    for key, value in specs.items():
        match = _CPU_RESOURCES.match(key)
        if match:
            try:
                amounts[match.group(2)] += int(value)
            except (TypeError, ValueError):
                pass        # request.py names the bad amount
    vcpu, pcpu = amounts["VCPU"], amounts["PCPU"]
    if policy is not None and (vcpu or pcpu):
        raise _invalid("resources:%s cannot be combined with a CPU policy "
                       "(hw:cpu_policy / hw_cpu_policy=%s); use one or the "
                       "other", "VCPU" if vcpu else "PCPU", policy)
    if vcpu and pcpu:
        raise _invalid("resources:VCPU=%d and resources:PCPU=%d cannot be "
                       "combined; use one or the other", vcpu, pcpu)
    if pcpu:
        want = vcpus + int(emulator == ISOLATE)
        if pcpu != want:
            raise _invalid("resources:PCPU=%d must be the flavor's %d vCPUs"
                           "%s", pcpu, vcpus,
                           " plus one for hw:emulator_threads_policy=isolate"
                           if emulator == ISOLATE else "")
        return DEDICATED, False
    if vcpu:
        return SHARED, False
    return policy, True


def _thread_from_trait(specs, thread):
    for key, value in specs.items():
        if not _HT_TRAIT.match(key):
            continue
        if thread is not None:
            raise _invalid("%s cannot be combined with a CPU thread policy "
                           "(hw:cpu_thread_policy=%s); use one or the other",
                           key, thread)
        return {"forbidden": ISOLATE, "required": REQUIRE}.get(value)
    return thread


def _dedicated_cpus(policy, thread, emulator, realtime, mask, vcpus):
    """The pinned guest vCPUs, once the combination is checked."""
    if policy in (None, SHARED):
        wrong = [what for what, bad in (
            ("CPU thread policy %s" % thread, thread is not None),
            ("hw:emulator_threads_policy=isolate", emulator == ISOLATE),
            ("hw:cpu_dedicated_mask", mask is not None),
            ("hw:cpu_realtime", realtime is not None)) if bad]
        if wrong:
            raise _invalid("%s needs hw:cpu_policy=dedicated or mixed",
                           wrong[0])
        return frozenset()
    if policy == DEDICATED:
        if mask is not None:
            raise _invalid("hw:cpu_dedicated_mask needs hw:cpu_policy=mixed, "
                           "not dedicated")
        return frozenset(range(vcpus))
    if realtime is not None and mask is not None:
        raise _invalid("hw:cpu_policy=mixed takes hw:cpu_dedicated_mask or "
                       "a realtime mask, not both")
    if realtime is None and mask is None:
        raise _invalid("hw:cpu_policy=mixed needs hw:cpu_dedicated_mask (or "
                       "hw:cpu_realtime with a realtime mask)")
    return mask if mask is not None else realtime


def cpu_request(flavor, image_props):
    """The :class:`CpuRequest` of a flavor and image.

    :raises: InvalidRequest for specs Nova would refuse
    """
    specs = flavor.extra_specs
    policy = _cpu_policy(specs, image_props)
    thread = _thread_policy(specs, image_props)
    emulator = _choice(_clean(specs.get("hw:emulator_threads_policy")),
                       EMULATOR_POLICIES, "hw:emulator_threads_policy")
    realtime = _realtime_cpus(flavor, image_props, emulator)
    mask = _dedicated_mask(flavor)
    policy, translate = _explicit_policy(specs, policy, emulator,
                                         flavor.vcpus)
    trait = None
    if thread in (ISOLATE, REQUIRE):
        # Nova asks Placement for hosts without / with SMT as well
        trait = (HYPERTHREADING,
                 "forbidden" if thread == ISOLATE else "required")
    thread = _thread_from_trait(specs, thread)
    dedicated = _dedicated_cpus(policy, thread, emulator, realtime, mask,
                                flavor.vcpus)
    return CpuRequest(policy=policy, thread_policy=thread,
                      emulator_isolate=emulator == ISOLATE,
                      dedicated=dedicated, translate=translate, trait=trait)


def _explicit_cells(extra_specs, nodes, vcpus, memory_mb):
    """``hw:numa_cpus.N``/``hw:numa_mem.N`` for every cell as ``(vCPU
    numbers, memory)``, or None."""
    keys = [k for k in extra_specs
            if k.startswith(("hw:numa_cpus.", "hw:numa_mem."))]
    if not keys:
        return None
    cells = []
    seen = set()
    for node in range(nodes):
        cpus = extra_specs.get("hw:numa_cpus.%d" % node)
        mem = extra_specs.get("hw:numa_mem.%d" % node)
        if cpus is None or mem is None:
            raise _invalid("hw:numa_cpus.%d and hw:numa_mem.%d are required "
                           "for every one of the %d NUMA nodes",
                           node, node, nodes)
        cpu_set = parse_cpu_spec(cpus, "hw:numa_cpus.%d" % node)
        if seen & cpu_set:
            raise _invalid("vCPU(s) %s are in more than one NUMA node",
                           sorted(seen & cpu_set))
        seen |= cpu_set
        cells.append((frozenset(cpu_set),
                      _positive(mem, "hw:numa_mem.%d" % node)))
    if seen != set(range(vcpus)) or sum(m for _c, m in cells) != memory_mb:
        raise _invalid("hw:numa_cpus.N must cover vCPUs 0-%d once and "
                       "hw:numa_mem.N must add up to %d MB", vcpus - 1,
                       memory_mb)
    return cells


def _even_cells(nodes, vcpus, memory_mb):
    if vcpus % nodes or memory_mb % nodes:
        raise _invalid("%d vCPUs and %d MB cannot be split evenly over %d "
                       "NUMA nodes; give hw:numa_cpus.N and hw:numa_mem.N",
                       vcpus, memory_mb, nodes)
    per = vcpus // nodes
    return [(frozenset(range(k * per, (k + 1) * per)), memory_mb // nodes)
            for k in range(nodes)]


def guest_topology(flavor, image_props, cpu=None):
    """The :class:`GuestTopology` a request asks for, or None.

    :param cpu: the request's :class:`CpuRequest` (derived when None)
    :raises: InvalidRequest for specs Nova would refuse
    """
    cpu = cpu or cpu_request(flavor, image_props)
    specs = flavor.extra_specs
    nodes = _setting(specs, image_props, "hw:numa_nodes", "hw_numa_nodes")
    page = _setting(specs, image_props, "hw:mem_page_size",
                    "hw_mem_page_size")
    if nodes is None and not cpu.pinned and page is None:
        return None
    count = _positive(nodes, "hw:numa_nodes") if nodes is not None else 1
    vcpus, memory = flavor.vcpus, flavor.memory_mb
    if count > max(vcpus, 1):
        raise _invalid("hw:numa_nodes=%d exceeds the flavor's %d vCPUs",
                       count, vcpus)
    layout = (_explicit_cells(specs, count, vcpus, memory)
              or _even_cells(count, vcpus, memory))
    cells = []
    for node, (numbers, mem) in enumerate(layout):
        # a mixed guest node may have no dedicated vCPU (or no shared
        # one): Nova accepts it, and pins nothing on its host cell
        pinned = len(numbers & cpu.dedicated)
        cells.append(GuestCell(len(numbers), mem, pinned,
                               int(cpu.emulator_isolate and node == 0)))
    return GuestTopology(
        cells=tuple(cells), cpu_policy=cpu.policy,
        page_size=None if page is None else parse_page_size(page),
        thread_policy=cpu.thread_policy,
        emulator_isolate=cpu.emulator_isolate)
