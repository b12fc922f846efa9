"""Sphinx configuration for Gantt's documentation (``tox -e docs``)."""

project = "Gantt"
copyright = "2026, The Gantt developers"
author = "The Gantt developers"

extensions = []
master_doc = "index"
exclude_patterns = []
html_theme = "alabaster"
# warnings are errors in ``tox -e docs`` (sphinx-build -W); a page that
# renders wrongly fails the build instead of shipping
nitpicky = False
