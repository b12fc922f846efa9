"""Agents to database to cache: reports parsed, judged, batched and stored."""
