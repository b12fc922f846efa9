"""The answer's pieces, written as text, are the JSON Placement's
clients parse, at every microversion shape."""

import dataclasses
import itertools
import json

import pytest

from gantt.api import candidates_body as body
from gantt.scheduler.state import provider_tree as pt

SHAPES = [body.Shape(*flags)
          for flags in itertools.product((False, True), repeat=5)]


def _provider():
    return pt.Provider(
        "cn1", "cn1", None, "cn1", generation=3,
        inventories={"VCPU": (16, 2, 1, 16, 1, 4.0),
                     "MEMORY_MB": (4096, 512, 1, 4096, 1, 1.5),
                     "CUSTOM_ÆON": (3, 0, 1, 3, 1, 1.0)},
        usage={"VCPU": 5}, traits=frozenset(["HW_B", "HW_A"]))


@pytest.mark.parametrize("shape", SHAPES)
def test_a_summary(shape):
    got = json.loads(body.summary_text(shape, _provider(),
                                       frozenset(["VCPU", "DISK_GB"])))
    resources = {"VCPU": {"capacity": 56, "used": 5}}
    if shape.every_class:
        resources.update({"MEMORY_MB": {"capacity": 5376, "used": 0},
                          "CUSTOM_ÆON": {"capacity": 3, "used": 0}})
    want = {"resources": resources}
    if shape.traits:
        want["traits"] = ["HW_A", "HW_B"]
    if shape.tree:
        want.update(parent_provider_uuid=None, root_provider_uuid="cn1")
    assert got == want


@pytest.mark.parametrize("shape", SHAPES)
def test_a_request(shape):
    got = json.loads(body.request_text(
        shape, {"cn1": {"VCPU": 1}, "pool": {"DISK_GB": 10}},
        {"": ("cn1", "pool"), "_NET": ("cn1",)}))
    if shape.listed:
        want = {"allocations": [
            {"resource_provider": {"uuid": "cn1"},
             "resources": {"VCPU": 1}},
            {"resource_provider": {"uuid": "pool"},
             "resources": {"DISK_GB": 10}}]}
    else:
        want = {"allocations": {"cn1": {"resources": {"VCPU": 1}},
                                "pool": {"resources": {"DISK_GB": 10}}}}
        if shape.mappings:
            want["mappings"] = {"": ["cn1", "pool"], "_NET": ["cn1"]}
    assert got == want


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("uuid", ["cn1", 'odd"%s\\name'])
def test_a_one_provider_request_from_its_template(shape, uuid):
    amounts = {"DISK_GB": 40, "VCPU": 2}
    render = body.request_template(shape, amounts)
    assert render(uuid) == body.request_text(shape, {uuid: amounts},
                                             {"": (uuid,)})


def test_the_body():
    text = body.body(['{"allocations": {}}'],
                     [("a", '{"resources": {}}'), ('b"', '{"resources": {}}')])
    assert json.loads(text) == {
        "allocation_requests": [{"allocations": {}}],
        "provider_summaries": {"a": {"resources": {}},
                               'b"': {"resources": {}}}}
    assert json.loads(body.body([], [])) == {"allocation_requests": [],
                                            "provider_summaries": {}}


@pytest.mark.parametrize("shape", SHAPES)
def test_summaries_kept_follow_the_classes_asked_and_a_new_provider(shape):
    texts = body.SummaryTexts(size=4)
    p = _provider()
    for asked in (frozenset(["VCPU"]), frozenset(["MEMORY_MB"]),
                  frozenset(["VCPU"])):
        assert texts(shape, p, asked) == body.summary_text(shape, p, asked)
    used = dataclasses.replace(p, usage={"VCPU": 9})
    asked = frozenset(["VCPU"])
    assert texts(shape, used, asked) == body.summary_text(shape, used,
                                                          asked)
    assert '"used": 9' in texts(shape, used, asked)
    for k in range(6):           # more than it keeps
        other = dataclasses.replace(p, usage={"VCPU": k})
        assert texts(shape, other, asked) == body.summary_text(
            shape, other, asked)
