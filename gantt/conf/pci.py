"""[pci]: PCI passthrough aliases (as Nova's ``[pci] alias``)."""

from oslo_config import cfg

from gantt.conf import groups

GROUP = cfg.OptGroup("pci", title="PCI passthrough options",
                     help="Names for the PCI devices flavors may request.")

OPTS = [
    cfg.MultiStrOpt("alias", default=[],
                    help="""
A PCI device alias as JSON, repeated for each alias (or for each kind of
device one alias covers), e.g.::

    alias = {"name": "nic", "vendor_id": "8086", "product_id": "154d",
             "device_type": "type-PF"}

Any other key (``physical_network``…) must equal the pool's tag of that
name. Flavors request devices with ``pci_passthrough:alias = "nic:2"``.
"""),
]


def register_opts(conf):
    groups.register(conf, GROUP, OPTS)


def list_opts():
    return {GROUP: OPTS}
