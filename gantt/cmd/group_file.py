"""Group descriptions as files (YAML or JSON), for ``gantt group-plan``.

The format (doc/source/admin/groups.rst, "Group files"; an example ships
as gantt/cmd/examples/group.yaml, ``gantt group-plan --example``)::

    group: 3e9b1c7d-5a2f-4b8e-9c1d-6f0a2b4c8e13   # optional: a new uuid
    project_id: p1
    objective: most-spread        # or fewest-hosts, balanced
    time_budget: 1.0              # seconds for the joint solver
    reservation_ttl: 600          # seconds a slot stays reserved
    policies:
      - {level: rack, rule: anti-affinity}
      - {level: row, rule: max-per, limit: 4}
      - {level: rack, rule: soft-anti-affinity, weight: 2.0}
    members:
      - name: db
        count: 3
        spec:                     # a request spec, as gantt explain reads
          flavor: {vcpus: 8, memory_mb: 32768, root_gb: 100}

``extend: true`` asks for more members of a reserved group (``--reserve``
then extends it).
"""

import json

from oslo_utils import uuidutils
import yaml

from gantt import exception
from gantt.cmd import spec_file
from gantt.objects import group as group_obj
from gantt.objects import request_spec

_TOP = {"group", "project_id", "user_id", "objective", "time_budget",
        "reservation_ttl", "policies", "members", "extend"}
_MEMBER = {"name", "count", "spec"}


def _refuse(reason):
    raise exception.InvalidRequest(reason="group file: " + reason)


def _mapping(data, known, where):
    if not isinstance(data, dict):
        _refuse("%s must be a mapping" % where)
    unknown = set(data) - known
    if unknown:
        _refuse("%s: unknown field(s) %s" % (where,
                                             ", ".join(sorted(unknown))))
    return data


def _build(cls, where, **values):
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise exception.InvalidRequest(
            reason="group file: %s: %s" % (where, exc)) from None


def _member(data, index):
    where = "members[%d]" % index
    _mapping(data, _MEMBER, where)
    spec = spec_file.from_dict(data.get("spec") or {})
    return _build(group_obj.GroupMember, where, name=str(data.get(
        "name", "member-%d" % index)), count=data.get("count", 1),
        request_spec=spec)


def _policy(data, index):
    where = "policies[%d]" % index
    _mapping(data, set(request_spec.GroupLevelPolicy.fields), where)
    return _build(request_spec.GroupLevelPolicy, where, **data)


def from_dict(data):
    """(GroupRequest, extend?) from plain data.

    :raises: InvalidRequest naming the bad field
    """
    _mapping(data, _TOP, "the group")
    members = data.get("members")
    if not isinstance(members, list) or not members:
        _refuse("members must be a non-empty list")
    values = {k: data[k] for k in ("project_id", "user_id", "objective",
                                   "time_budget", "reservation_ttl")
              if k in data}
    request = _build(
        group_obj.GroupRequest, "the group",
        group_uuid=str(data.get("group") or uuidutils.generate_uuid()),
        policies=[_policy(p, i) for i, p in enumerate(
            data.get("policies") or [])],
        members=[_member(m, i) for i, m in enumerate(members)], **values)
    return request, bool(data.get("extend", False))


def load(path):
    """Read a YAML or JSON group file."""
    with open(path) as f:
        text = f.read()
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            _refuse("%s is neither JSON nor YAML: %s" % (path, exc))
    return from_dict(data)
