"""The names a report or a request may use: resource classes and traits.

Standard names are os-resource-classes' and os-traits'; anything else must
be ``CUSTOM_`` followed by upper-case letters, digits and underscores, as
in Placement. Both the intake (agents' reports) and the pipeline
(requests) check names here, so that one rule judges both.
"""

import re

import os_resource_classes
import os_traits

from gantt import exception

_CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())


def validate_resource_class(name):
    if name in _STANDARD_CLASSES or _CUSTOM.match(name or ""):
        return name
    raise exception.InvalidRequest(
        reason="unknown resource class %r (use a standard class or "
               "CUSTOM_[A-Z0-9_]+)" % (name,))


def validate_trait(name):
    if name in _STANDARD_TRAITS or _CUSTOM.match(name or ""):
        return name
    raise exception.InvalidRequest(
        reason="unknown trait %r (use a standard trait or CUSTOM_[A-Z0-9_]+)"
               % (name,))
