"""The wire contract: oslo.versionedobjects in the ``gantt`` namespace.

Objects here carry data only: no SQL and no scheduling logic.
"""


def register_all():
    """Import every object module so that the registry knows them."""
    __import__("gantt.objects.compute_node")
    __import__("gantt.objects.request_spec")
    __import__("gantt.objects.selection")
    __import__("gantt.objects.host_state")
    __import__("gantt.objects.usage")
    __import__("gantt.objects.statistics")
    __import__("gantt.objects.numa")
    __import__("gantt.objects.pci")
    __import__("gantt.objects.aggregate")
    __import__("gantt.objects.explain")
    __import__("gantt.objects.provider")
    __import__("gantt.objects.notification")
    __import__("gantt.objects.group")
