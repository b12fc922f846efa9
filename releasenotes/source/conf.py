"""Sphinx configuration for Gantt's release notes (``tox -e releasenotes``).

The notes themselves are reno YAML files in ``releasenotes/notes/``, one per
user-visible change; reno's Sphinx extension collects them from git.
"""

project = "Gantt Release Notes"
copyright = "2026, The Gantt developers"
author = "The Gantt developers"

extensions = ["reno.sphinxext"]
master_doc = "index"
html_theme = "alabaster"
