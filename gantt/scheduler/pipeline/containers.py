"""Container requests: sequential fill, place-on-instance, "every host full".

A container service (Magnum) runs its containers on Nova instances that
report themselves as container hosts, each linked to its instance uuid.
Three rules serve it, on the ordinary engine:

* **Sequential fill** (``fill="sequential"``): among the hosts that pass
  the filters, the first in a stable order, host name then node name then
  uuid. Every worker and every run picks the same host, whatever
  ``host_subset_size`` and ``shuffle_best_same_weighed_hosts`` say, and
  the weighers only rank alternates. The first host fills until nothing
  more fits, then the next; a container that leaves a hole in an early
  host is replaced there first (first fit), so the late hosts empty out
  and can be retired.
* **Place on an instance** (``on_instance=<uuid>``): only the container
  host linked to that instance, a candidates step that always runs (a
  request that names an instance is never placed elsewhere because a
  filter was left out of a list). The link is the
  ``instance_uuid`` of the provider's report (ProviderReport 1.2), or
  the ``instance_uuid`` a compute node reports in its ``stats``.
* **Every host full**: when a container request finds no host and some
  host passes every rule except room (resources, instance counts, the
  anti-affinity of its group), the answer is
  :class:`~gantt.exception.ProvidersFull`, which a service turns into
  "create another instance"; otherwise the plain NoValidHost.

A request asks for the two modes with the scheduler hints ``fill`` and
``on_instance`` (one string each); :func:`request_fields` checks them.
The request record keeps them as ``fill`` and ``on_instance``, where a
versioned request field can set them as well. A request is a
container's (:func:`is_container_request`) when its profile considers
container hosts (``provider_kinds``, as ``[profile:container]`` in
``doc/examples/services.conf``) or it uses either mode.
"""

import uuid

import numpy as np

from gantt import exception
from gantt.scheduler.pipeline import filters as filters_base

#: the picking rule that fills hosts one after another
SEQUENTIAL = "sequential"
FILLS = (SEQUENTIAL,)
#: the scheduler hints that carry the two request fields today
FILL_HINT = "fill"
ON_INSTANCE_HINT = "on_instance"
#: the provider kind of container hosts (as a request's provider kinds
#: name it)
CONTAINER_KIND = "container"
#: the stats key (and host-table column) linking a host to its instance
LINK = "instance_uuid"
#: filters that remove a host for want of room, which another host (a new
#: instance) would have: what "full" means
ROOM_FILTERS = frozenset((
    "ResourceFilter", "NumInstancesFilter", "AggregateNumInstancesFilter",
    "IoOpsFilter", "AggregateIoOpsFilter", "ServerGroupAntiAffinityFilter",
))


def request_fields(hints):
    """``{"fill": …, "on_instance": …}`` from the scheduler hints, checked.

    :param hints: ``{name: [strings]}`` as a RequestSpec carries them
    :raises: InvalidRequest for more than one value, an unknown fill or an
        on_instance that is not a uuid
    """
    fill = _one(hints, FILL_HINT)
    if fill is not None and fill not in FILLS:
        raise exception.InvalidRequest(
            reason="scheduler hint fill must be one of %s, got %r"
                   % (", ".join(FILLS), fill))
    instance = _one(hints, ON_INSTANCE_HINT)
    if instance is not None:
        instance = _uuid(instance)
    return {"fill": fill, "on_instance": instance}


def _one(hints, name):
    values = hints.get(name)
    if not values:
        return None
    if isinstance(values, str):
        values = [values]
    if len(values) != 1:
        raise exception.InvalidRequest(
            reason="scheduler hint %s takes one value, got %d"
                   % (name, len(values)))
    return values[0]


def _uuid(value):
    try:
        return str(uuid.UUID(value))
    except (TypeError, ValueError, AttributeError):
        raise exception.InvalidRequest(
            reason="scheduler hint on_instance must be an instance uuid, "
                   "got %r" % (value,)) from None


def is_container_request(request):
    """Whether ``request`` is a container's: it fills sequentially, names
    an instance, or its profile considers container hosts
    (``provider_kinds``)."""
    return (request.fill == SEQUENTIAL or request.on_instance is not None
            or CONTAINER_KIND in request.provider_kinds)


# -- place on an instance ------------------------------------------------


def rows_on_instance(view, instance_uuid):
    """The rows of ``view`` linked to ``instance_uuid`` (a boolean mask):
    by the link of their provider report (the table's indexed
    ``instance_link`` column: one comparison of integers), or by the stat
    a compute node reports."""
    code = view.table.links_index.get(instance_uuid)
    reported = (np.zeros(view.n, dtype=bool) if code is None
                else view.column("instance_link") == code)
    return reported | view.stat(LINK, lambda value: value == instance_uuid,
                                False)


def on_instance_steps(view, request):
    """The candidates step of a request that names an instance."""
    if request.on_instance is not None:
        yield ("not the container host of instance %s" % request.on_instance,
               rows_on_instance(view, request.on_instance))


# -- sequential fill ------------------------------------------------------


def first_in_order(view, rows):
    """The row of ``rows`` (a non-empty index array) first in the stable
    order: host name, then node name, then uuid."""
    hosts = view.hosts[rows]
    first = hosts.min()
    tied = rows[hosts == first]
    if len(tied) > 1:
        keys = [(view.nodenames[r], view.uuids[r]) for r in tied.tolist()]
        return int(tied[keys.index(min(keys))])
    return int(tied[0])


def pick_sequential(view, weighing):
    """``(row, weight)``: the first candidate of ``weighing`` in the stable
    order."""
    row = first_in_order(view, weighing.rows)
    if weighing.full is not None:
        return row, weighing.weight(row)
    [i] = np.flatnonzero(weighing.rows == row)
    return row, float(weighing.totals[i])


# -- every host full ------------------------------------------------------


def full_hosts(runner, view, request, candidates_mask):
    """How many hosts pass every filter of ``runner`` but the room ones
    (:data:`ROOM_FILTERS`): the hosts a container request found full."""
    rules = filters_base.FilterRunner(
        [f for f in runner.filters if f.name not in ROOM_FILTERS],
        vectorised=runner.vectorised)
    outcome = rules.run(view, request, candidates_mask,
                        skip_filters=request.forced)
    return int(np.count_nonzero(outcome.mask))


def no_room(runner, view, request, candidates_mask, summary):
    """The exception for a request no host passed: ProvidersFull when it
    is a container request that only room kept out, else NoValidHost."""
    if is_container_request(request):
        count = full_hosts(runner, view, request, candidates_mask)
        if count:
            return exception.ProvidersFull(hosts=count, reason=summary)
    return exception.NoValidHost(reason=summary)
