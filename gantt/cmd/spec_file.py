"""Request specs as files: JSON or YAML, for ``gantt explain``.

The file holds the RequestSpec's fields as plain data, nested objects as
mappings, for example::

    flavor: {name: m1.large, vcpus: 4, memory_mb: 8192, root_gb: 40,
             extra_specs: {"hw:cpu_policy": dedicated}}
    image: {id: img-1, properties: {hw_architecture: x86_64}}
    availability_zone: az1
    project_id: p1
    instance_group: {uuid: 0b7a3d2e-8f9c-4c1d-a2b3-c4d5e6f70819,
                     policy: anti-affinity, rules: {max_server_per_host: "2"}}
    scheduler_hints: {query: ['[">=", "$free_ram_mb", 4096]']}
    request_groups: [{suffix: "1", resources: {CUSTOM_FPGA: 1}}]
    requested_destination: {cell_uuid: ..., aggregates: ["agg1,agg2"]}

Every field is described in doc/source/admin/cli.rst ("Request spec
files"); an example ships as gantt/cmd/examples/explain-request.yaml
(``gantt explain --example``).
"""

import json

import yaml

from gantt import exception
from gantt.objects import request_spec

_NESTED = {
    "flavor": request_spec.Flavor,
    "image": request_spec.ImageMeta,
    "instance_group": request_spec.InstanceGroup,
    "requested_destination": request_spec.Destination,
}


def _stringify(mapping):
    return {str(k): str(v) for k, v in (mapping or {}).items()}


def _object(cls, data, where):
    if not isinstance(data, dict):
        raise exception.InvalidRequest(
            reason="%s must be a mapping, got %r" % (where, data))
    unknown = set(data) - set(cls.fields)
    if unknown:
        raise exception.InvalidRequest(
            reason="%s: unknown field(s) %s" % (where,
                                                ", ".join(sorted(unknown))))
    data = dict(data)
    for key in ("extra_specs", "properties", "rules", "capabilities"):
        if key in data:
            data[key] = _stringify(data[key])
    try:
        return cls(**data)
    except (ValueError, TypeError) as exc:
        raise exception.InvalidRequest(
            reason="%s: %s" % (where, exc)) from None


def _hint(name, value):
    if isinstance(value, str):
        return [value]
    if name == "query":
        # JsonFilter's query may be given as structure, not as a string
        return [json.dumps(value)]
    return [str(x) for x in (value if isinstance(value, list) else [value])]


def from_dict(data):
    """A RequestSpec from plain data.

    :raises: InvalidRequest naming the bad field
    """
    if not isinstance(data, dict):
        raise exception.InvalidRequest(reason="a request spec is a mapping")
    fields = dict(data)
    for name, cls in _NESTED.items():
        if fields.get(name) is not None:
            fields[name] = _object(cls, fields[name], name)
    if "request_groups" in fields:
        fields["request_groups"] = [
            _object(request_spec.RequestGroup, g, "request_groups[%d]" % i)
            for i, g in enumerate(fields["request_groups"] or [])]
    if "scheduler_hints" in fields:
        fields["scheduler_hints"] = {
            str(k): _hint(str(k), v)
            for k, v in (fields["scheduler_hints"] or {}).items()}
    return _object(request_spec.RequestSpec, fields, "request spec")


def load(path):
    """Read a JSON or YAML request spec file."""
    with open(path) as f:
        text = f.read()
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise exception.InvalidRequest(
                reason="%s is neither JSON nor YAML: %s" % (path, exc)
            ) from None
    return from_dict(data)
