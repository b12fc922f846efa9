"""Gantt's oslo.messaging serializer: versioned objects at the versions a
caller's cap allows, and a malformed object refused as ``InvalidRequest``.

A ``select_destinations`` reply (lists of Selections) at the objects' own
versions goes to and from primitives by :mod:`gantt.objects.lean`, which
makes what ovo makes, without its per-field layers; under a cap that
backports Selections it takes ovo's path.
"""

import oslo_messaging as messaging
from oslo_versionedobjects import exception as ovo_exc

from gantt import context as gantt_context
from gantt import exception
from gantt.objects import base as objects_base
from gantt.objects import lean
from gantt.rpc import _private
from gantt.rpcapi import versions


class Serializer(messaging.Serializer):
    """Versioned objects in, versioned objects out; any dict as context.

    :param version_manifest: ``{object name: version}`` to send objects at
        (a caller's version cap, see gantt.rpcapi.versions); None sends
        each at its own version
    """

    def __init__(self, version_manifest=None):
        self._objects = objects_base.GanttObjectSerializer()
        self._manifest = version_manifest
        self._backport = frozenset()
        if version_manifest is not None:
            self._backport = versions.needing_backport(version_manifest)
        # a reply at today's versions (ovo backports anything else)
        self._lean = lean.REPLY_CLASS.obj_name() not in self._backport

    def serialize_entity(self, ctxt, entity):
        if self._lean and lean.is_reply(entity):
            return lean.reply_primitive(entity)
        if not self._backport:
            return self._objects.serialize_entity(ctxt, entity)
        if isinstance(entity, (tuple, list, set, dict)):
            return _each(ctxt, self.serialize_entity, entity)
        if (isinstance(entity, objects_base.GanttObject)
                and entity.obj_name() in self._backport):
            # children follow the manifest too (ovo backports them by it)
            return entity.obj_to_primitive(
                target_version=self._manifest.get(entity.obj_name(),
                                                  entity.VERSION),
                version_manifest=self._manifest)
        # unchanged under the manifest, nothing changed inside: as it is
        return self._objects.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt, entity):
        try:
            if lean.looks_like_reply(entity):
                return lean.reply_from_primitive(
                    ctxt, entity, self._objects.deserialize_entity)
            return self._objects.deserialize_entity(ctxt, entity)
        except ovo_exc.IncompatibleObjectVersion as exc:
            _refuse("object version not supported: %s" % exc)
        except (ovo_exc.VersionedObjectsException, ValueError, TypeError,
                KeyError, AttributeError) as exc:
            _refuse("malformed object: %s" % (exc,))

    def serialize_context(self, ctxt):
        if isinstance(ctxt, dict):
            return ctxt
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return gantt_context.RequestContext.from_wire(ctxt)


def _refuse(reason):
    """Raise ``InvalidRequest(reason)`` wrapped as an expected exception
    (the dispatcher then counts and logs it as a rejection)."""
    raise _private.expected(exception.InvalidRequest(reason=reason)) from None


def _each(ctxt, action, values):
    """``action(ctxt, value)`` of each value of a container, in a new one
    of the same type (a set becomes a list: it may not hold dicts), as
    oslo.versionedobjects' serializer walks containers."""
    if isinstance(values, dict):
        return type(values)((k, action(ctxt, v)) for k, v in values.items())
    if isinstance(values, tuple):
        return tuple(action(ctxt, value) for value in values)
    return [action(ctxt, value) for value in values]

