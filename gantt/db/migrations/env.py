"""Alembic environment: always run with a connection handed in by Gantt."""

from alembic import context

from gantt.db import models


def run_migrations_online():
    connection = context.config.attributes["connection"]
    context.configure(connection=connection,
                      target_metadata=models.Base.metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
