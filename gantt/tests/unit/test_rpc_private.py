"""The private hooks of oslo.messaging that gantt.rpc._private uses: each
one still exists in the installed release, with the parameters it was
written for, and that release is inside the range setup.cfg pins.

One test per hook (``HOOKS``): an upgrade of oslo.messaging that moves
one fails here, by name, with the reason Gantt needs it. The internals of
oslo.versionedobjects' fields that Gantt reads get one test each too
(``OVO_INTERNALS``), and its release is checked against its pin.
"""

import functools
import importlib
from importlib import metadata
import inspect

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields as ovo_fields
from packaging import requirements
from packaging import version
import pytest

from gantt.objects import provider
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


# -- oslo.versionedobjects: field internals Gantt reads ----------------------
# (gantt/rpcapi/validate.py compiles its checks from the field types,
# gantt/rpcapi/versions.py walks an object's children, and
# gantt/objects/base.py serialises without ovo's per-field coercion)


_LISTED = ovo_fields.ListOfObjectsField("Inventory")

#: what Gantt reads of ovo, and how: one check per internal
OVO_INTERNALS = {
    "Field._type": lambda: isinstance(_LISTED._type, ovo_fields.List),
    "List._element_type": lambda: isinstance(
        _LISTED._type._element_type, ovo_fields.Field),
    "Dict._element_type": lambda: isinstance(
        ovo_fields.DictOfStringsField()._type._element_type,
        ovo_fields.Field),
    "Object._obj_name": lambda: (
        _LISTED._type._element_type._type._obj_name == "Inventory"),
    "_get_attrname": lambda: ovo_base._get_attrname("name") == "_obj_name",
    "_obj_<field> holds the value": lambda: (
        provider.ResourceProvider(name="x")._obj_name == "x"),
    "VersionedObject._changed_fields": lambda: (
        provider.ResourceProvider(name="x")._changed_fields == {"name"}),
}


@pytest.mark.parametrize("name", sorted(OVO_INTERNALS))
def test_the_ovo_internal_is_there_as_read(name):
    assert OVO_INTERNALS[name](), name


def test_the_installed_ovo_is_in_the_pinned_range():
    pinned = _pinned("oslo.versionedobjects")
    assert pinned.filter([metadata.version("oslo.versionedobjects")]), (
        "check the ovo internals above against it, then move the pin")
