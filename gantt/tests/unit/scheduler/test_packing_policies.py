"""The named packing policies lay their settings over the operator's."""

import pytest

from gantt.scheduler.pipeline import packing

DEFAULTS = ["RAMWeigher", "CPUWeigher", "DiskWeigher"]


def test_spread_sets_novas_resource_multipliers_and_keeps_the_weighers():
    assert packing.settings("spread", DEFAULTS) == {
        "enabled_weighers": DEFAULTS, "ram_weight_multiplier": 1.0,
        "cpu_weight_multiplier": 1.0, "disk_weight_multiplier": 1.0}


def test_stack_turns_every_resource_weigher_round():
    settings = packing.settings("stack", DEFAULTS)
    assert settings["ram_weight_multiplier"] == -1.0
    assert settings["cpu_weight_multiplier"] == -1.0
    assert settings["disk_weight_multiplier"] == -1.0
    assert settings["enabled_weighers"] == DEFAULTS


def test_balanced_adds_its_weigher_once_at_the_end():
    settings = packing.settings("balanced+stack", DEFAULTS)
    assert settings["enabled_weighers"] == DEFAULTS + [packing.BALANCED]
    again = packing.settings("balanced", settings["enabled_weighers"])
    assert again["enabled_weighers"] == DEFAULTS + [packing.BALANCED]
    assert settings["balanced_allocation_weight_multiplier"] == 5.0


def test_the_operators_list_is_not_changed():
    weighers = list(DEFAULTS)
    packing.settings("balanced", weighers)
    assert weighers == DEFAULTS


def test_an_unknown_policy_is_a_key_error():
    with pytest.raises(KeyError):
        packing.settings("tetris", DEFAULTS)
