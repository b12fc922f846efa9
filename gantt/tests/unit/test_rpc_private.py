"""The private hooks of oslo.messaging that gantt.rpc._private uses: each
one still exists in the installed release, with the parameters it was
written for, and that release is inside the range setup.cfg pins.

One test per hook (``HOOKS``): an upgrade of oslo.messaging that moves
one fails here, by name, with the reason Gantt needs it.
"""

import functools
import importlib
from importlib import metadata
import inspect

from packaging import requirements
from packaging import version
import pytest

from gantt.rpc import _private
from gantt.rpc import dispatcher as rpc_dispatcher


def _owner(path):
    """The module or class at dotted ``path``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return functools.reduce(getattr, parts[cut:], module)
    raise ImportError(path)


@pytest.mark.parametrize("hook", _private.HOOKS,
                         ids=lambda hook: hook.name)
def test_the_hook_is_there_as_written(hook):
    owner = _owner(hook.owner)
    if hook.params is None:
        # an attribute: a module's, or one the class's code assigns
        if inspect.ismodule(owner):
            assert hasattr(owner, hook.name), hook.reason
        else:
            assert "self.%s = " % hook.name in inspect.getsource(owner), (
                hook.reason)
        return
    assert hook.name in vars(owner), hook.reason
    params = tuple(inspect.signature(getattr(owner, hook.name)).parameters)
    assert params == hook.params, hook.reason


def _pinned(distribution):
    requirement = next(
        requirements.Requirement(text)
        for text in metadata.requires("gantt")
        if requirements.Requirement(text).name == distribution)
    return requirement.specifier


def test_the_installed_oslo_messaging_is_in_the_pinned_range():
    pinned = _pinned("oslo.messaging")
    assert str(pinned) == ",".join(sorted(_private.OSLO_MESSAGING_RANGE)), (
        "setup.cfg and gantt.rpc._private.OSLO_MESSAGING_RANGE disagree")
    installed = version.Version(metadata.version("oslo.messaging"))
    assert installed in pinned, (
        "oslo.messaging %s is outside %s: check gantt.rpc._private.HOOKS "
        "against it, then move both pins" % (installed, pinned))


@pytest.mark.parametrize("served, sent", [
    ("1.7", "1.0"), ("1.7", "1.7"), ("1.7", "1.8"), ("1.7", "2.0"),
    ("2.0", "1.0"), ("1.7", "1.7.1"), ("1.7.1", "1.7"), ("1.7.1", "1.7.2"),
    ("1.7.2", "1.7.1"), ("1.10", "1.9"), ("1.9", "1.10"), (None, "3.1"),
])
def test_version_compatibility_is_oslo_messagings(served, sent):
    # what replaced oslo_messaging._utils.version_is_compatible
    from oslo_messaging import _utils
    assert rpc_dispatcher.version_is_compatible(served, sent) == (
        _utils.version_is_compatible(served, sent))
