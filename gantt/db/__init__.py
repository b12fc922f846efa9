"""Persistence: the database is the truth, caches are copies of it."""
