"""Placement's REST API (microversions 1.0-1.39) on Gantt's database.

``gantt.api.app.make_app(conf)`` is the WSGI application,
``gantt.api.wsgi:application`` its deploy entry point, ``gantt-api`` a
development server. Writes go through the scheduler's own claim code
(``gantt.db.allocations``) and are cast to the workers
(:mod:`gantt.api.notify`).
"""
