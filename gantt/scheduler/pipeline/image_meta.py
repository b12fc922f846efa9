"""Canonical values of the image properties Nova types as enums.

Nova's ``ImageMetaProps`` coerces ``hw_architecture`` and
``hw_emulation_architecture``, ``img_hv_type`` and ``hw_vm_mode`` to their
canonical names (``amd64`` is ``x86_64``, ``xapi`` is ``xen``, ``hv`` is
``hvm``; all lower case), so each of Nova's filters, weighers and request
filters sees the canonical value. Gantt canonicalises a request's image
properties the same way when it reads the request (:func:`canonical`),
with its own tables of the aliases Nova knows.
"""

ARCH_ALIASES = {"i386": "i686", "i486": "i686", "i586": "i686",
                "x86_32": "i686", "x86_32p": "i686", "amd64": "x86_64"}
HV_ALIASES = {"xapi": "xen"}
MODE_ALIASES = {"pv": "xen", "hv": "hvm", "baremetal": "hvm"}

#: typed property (and its legacy name) -> the aliases of its values
TYPED = {"hw_architecture": ARCH_ALIASES, "architecture": ARCH_ALIASES,
         "hw_emulation_architecture": ARCH_ALIASES,
         "img_hv_type": HV_ALIASES, "hypervisor_type": HV_ALIASES,
         "hw_vm_mode": MODE_ALIASES, "vm_mode": MODE_ALIASES}


def canonical_value(value, aliases):
    """The canonical name of ``value`` (None for an empty one)."""
    if not value:
        return None
    value = str(value).lower()
    return aliases.get(value, value)


def canonical(props):
    """``props`` with the value of each typed property canonical."""
    return {key: canonical_value(value, TYPED[key])
            if key in TYPED and value else value
            for key, value in props.items()}
