"""The body of ``GET /allocation_candidates``, written as JSON text
piece by piece: a thousand candidates and their provider summaries are
most of the answer's cost when built as dicts and encoded whole.

Every string (uuid, class, trait list) goes through :func:`json.dumps`
(memoised: the same providers come back request after request); numbers
are written with ``%d``; the pieces are joined with the separators
``json.dumps`` uses, so the text is what encoding the same dicts would
give. A provider's summary is kept while the provider object lives
(:class:`SummaryTexts`): a GET on an unchanged cloud writes none again.
:func:`request_template` derives the flat path's one-provider request
from :func:`request_text` itself, so both paths answer alike.
"""

import functools
import json
import typing

from gantt.api import microversion

_MARK = "@provider@"


class Shape(typing.NamedTuple):
    """What the answer shows at the request's microversion (read once:
    a microversion comparison costs more than a summary; a tuple, as it
    is part of a key looked up per provider)."""

    listed: bool           # before 1.12: allocations as a list
    mappings: bool         # 1.34
    every_class: bool      # 1.27: every class of a summarized provider
    traits: bool           # 1.17
    tree: bool             # 1.29

    @classmethod
    def of(cls, req):
        return cls(listed=not microversion.at_least(req, 12),
                   mappings=microversion.at_least(req, 34),
                   every_class=microversion.at_least(req, 27),
                   traits=microversion.at_least(req, 17),
                   tree=microversion.at_least(req, 29))


@functools.lru_cache(maxsize=1 << 16)
def _text(value):
    return json.dumps(value)


@functools.lru_cache(maxsize=1 << 14)
def _traits(traits):
    return json.dumps(sorted(traits))


def request_text(shape, allocations, mappings):
    """One allocation request: ``allocations`` ``{uuid: {class:
    amount}}``, ``mappings`` ``{suffix: uuids}``."""
    if shape.listed:
        body = {"allocations": [
            {"resource_provider": {"uuid": uuid}, "resources": dict(used)}
            for uuid, used in allocations.items()]}
    else:
        body = {"allocations": {uuid: {"resources": dict(used)}
                                for uuid, used in allocations.items()}}
        if shape.mappings:
            body["mappings"] = {suffix: list(uuids)
                                for suffix, uuids in mappings.items()}
    return json.dumps(body)


def request_template(shape, amounts):
    """The request of one provider taking ``amounts`` for the unsuffixed
    group, as a function of that provider's uuid."""
    text = request_text(shape, {_MARK: amounts}, {"": (_MARK,)})
    mark = json.dumps(_MARK)
    template = text.replace("%", "%%").replace(mark, "%s")
    count = text.count(mark)

    def render(uuid):
        return template % ((_text(uuid),) * count)
    return render


def summary_text(shape, provider, asked):
    """The provider summary of ``provider`` (``asked``: the classes the
    request names, all that is shown before 1.27)."""
    usage = provider.usage
    resources = ", ".join(
        '%s: {"capacity": %d, "used": %d}' % (
            _text(rc), int((inv[0] - inv[1]) * inv[5]),
            int(usage.get(rc, 0)))
        for rc, inv in provider.inventories.items()
        if shape.every_class or rc in asked)
    out = '{"resources": {%s}' % resources
    if shape.traits:
        out += ', "traits": ' + _traits(provider.traits)
    if shape.tree:
        out += ', "parent_provider_uuid": %s, "root_provider_uuid": %s' % (
            _text(provider.parent_uuid), _text(provider.root_uuid))
    return out + "}"


class SummaryTexts:
    """:func:`summary_text`, remembered per provider object (providers
    are immutable: a changed provider is a new object) while it is held
    here, at most ``size`` of them (all forgotten when full). One per
    application; safe to share between threads."""

    def __init__(self, size=1 << 14):
        self._size = size
        self._held = {}

    def __call__(self, shape, provider, asked):
        if shape.every_class:
            asked = None            # every class is shown
        key = (id(provider), shape, asked)
        hit = self._held.get(key)
        if hit is not None and hit[0] is provider:
            return hit[1]
        text = summary_text(shape, provider, asked)
        if len(self._held) >= self._size:
            self._held.clear()
        self._held[key] = (provider, text)
        return text


def body(requests, summaries):
    """The whole answer, as bytes: ``requests`` texts, ``summaries``
    ``(uuid, text)`` pairs."""
    return ('{"allocation_requests": [%s], "provider_summaries": {%s}}' % (
        ", ".join(requests),
        ", ".join("%s: %s" % (_text(uuid), text)
                  for uuid, text in summaries))).encode()
