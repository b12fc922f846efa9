"""Gantt's build, through pbr: the metadata is in setup.cfg, and the
version comes from git (tags and the commit count), see pyproject.toml."""

import setuptools

setuptools.setup(setup_requires=["pbr>=6.1.1"], pbr=True)
