"""Policy files for the fixtures.

Placement's OpenPolicyFixture sets every registered rule but ``admin_api``
to ``@`` (anyone); here that is a policy file the application reads
through ``[oslo_policy] policy_file``. The rule names are Gantt's API's
(:mod:`gantt.api.policies`), which are Placement's.
"""

import os
import tempfile

import yaml


def open_rules():
    """Every rule but ``admin_api``, as ``@``."""
    from gantt.api import policies
    return {rule.name: "@" for rule in policies.list_rules()
            if rule.name != "admin_api"}


def write(kind=None):
    """A policy file: ``kind`` "open" (OpenPolicyFixture) or None (no
    rules: the defaults); returns its path, for the caller to remove."""
    rules = open_rules() if kind == "open" else {}
    fd, path = tempfile.mkstemp(prefix="gantt-gabbits-policy-",
                                suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(rules, f)
    return path
