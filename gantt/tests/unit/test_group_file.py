"""Group files (``gantt group-plan``): the shipped example reads, and a
file that gets anything wrong is refused naming where."""

from importlib import resources

import pytest
import yaml

from gantt import exception
from gantt.cmd import group_file
from gantt.cmd.cli import groups as groups_cli


def test_the_shipped_example_is_a_valid_group():
    package, name = groups_cli.EXAMPLE
    text = resources.files(package).joinpath(name).read_text()
    request, extend = group_file.from_dict(yaml.safe_load(text))
    assert not extend
    assert [(m.name, m.count) for m in request.members] == [
        ("db", 3), ("web", 6)]
    assert [(p.level, p.rule, p.limit) for p in request.policies] == [
        ("host", "anti-affinity", 1), ("rack", "max-per", 2),
        ("row", "affinity", 1)]
    assert request.members[0].request_spec.flavor.vcpus == 8


def test_a_file_without_a_group_uuid_gets_a_new_one():
    first, _ = group_file.from_dict({"members": [{"count": 1}]})
    second, _ = group_file.from_dict({"members": [{"count": 1}]})
    assert first.group_uuid != second.group_uuid


@pytest.mark.parametrize("data, where", [
    ([], "the group must be a mapping"),
    ({"members": []}, "members must be a non-empty list"),
    ({"members": [{"count": 1}], "colour": "red"},
     "the group: unknown field(s) colour"),
    ({"members": [{"count": 1, "size": 3}]},
     "members[0]: unknown field(s) size"),
    ({"members": [{"count": "many"}]}, "members[0]"),
    ({"members": [{"count": 1, "spec": {"flavor": {"vcpus": "x"}}}]},
     "flavor"),
    ({"members": [{"count": 1}], "policies": [{"level": "rack",
                                               "rule": "nearby"}]},
     "policies[0]"),
    ({"members": [{"count": 1}], "policies": [{"level": "rack",
                                               "rule": "affinity",
                                               "distance": 2}]},
     "policies[0]: unknown field(s) distance"),
    ({"members": [{"count": 1}], "objective": "cheapest"}, "the group"),
    ({"group": "g1", "members": [{"count": 1}]}, "the group"),
])
def test_a_bad_file_is_refused_naming_where(data, where):
    with pytest.raises(exception.InvalidRequest) as error:
        group_file.from_dict(data)
    assert where in str(error.value)


def test_a_file_that_is_neither_json_nor_yaml_is_refused(tmp_path):
    path = tmp_path / "group.yaml"
    path.write_text("members: [\n")
    with pytest.raises(exception.InvalidRequest, match="neither JSON nor"):
        group_file.load(str(path))
