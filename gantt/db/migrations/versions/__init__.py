"""Alembic revisions of Gantt's schema, oldest first."""
