"""Nova's front door: Nova's scheduler RPC API, served by Gantt's engine.

:mod:`.objects` reads and writes Nova's wire objects without Nova,
:mod:`.translate` maps them to Gantt's and back, :mod:`.endpoint` serves
Nova's methods and :mod:`.server` is their RPC server (``[nova] enabled``);
:mod:`.compute_nodes` reads Nova's records of its compute nodes for
gantt-api (``[nova] api_database_connection``).
"""
