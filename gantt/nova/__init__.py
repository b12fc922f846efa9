"""Nova's front door: Nova's scheduler RPC API, served by Gantt's engine.

:mod:`.objects` reads and writes Nova's wire objects without Nova,
:mod:`.translate` maps them to Gantt's and back, :mod:`.endpoint` serves
Nova's methods and :mod:`.server` is their RPC server (``[nova] enabled``).
"""
