"""Placement's default policy rules, under Placement's names.

The rule names (``placement:resource_providers:list``...) and defaults are
Placement's, so that a policy file written for Placement applies to Gantt
unchanged: admin or service for everything but the total usages of a
project (its readers too) and the reshaper (services only).
``oslopolicy-sample-generator --namespace gantt`` lists them.
"""

from oslo_log import versionutils
from oslo_policy import policy

ADMIN_OR_SERVICE = "rule:admin_or_service_api"
SERVICE = "rule:service_api"
PROJECT_READER = "rule:admin_or_project_reader_or_service_api"

_LEGACY_ADMIN = policy.DeprecatedRule(
    name="rule:admin_api", check_str="role:admin",
    deprecated_reason="Placement's defaults moved to admin, service and "
                      "reader roles with project scope.",
    deprecated_since=versionutils.deprecated.WALLABY)

BASE_RULES = [
    policy.RuleDefault("admin_api", "role:admin",
                       description="Administrators.",
                       scope_types=["project"]),
    policy.RuleDefault("service_api", "role:service",
                       description="Other services (Nova, Neutron...).",
                       scope_types=["project"],
                       deprecated_rule=_LEGACY_ADMIN),
    policy.RuleDefault("admin_or_service_api", "role:admin or role:service",
                       description="Administrators and services.",
                       scope_types=["project"],
                       deprecated_rule=_LEGACY_ADMIN),
    policy.RuleDefault("project_reader_api",
                       "role:reader and project_id:%(project_id)s",
                       description="Readers of the project in question.",
                       deprecated_rule=_LEGACY_ADMIN),
    policy.RuleDefault("admin_or_project_reader_or_service_api",
                       "role:admin or rule:project_reader_api or "
                       "role:service",
                       description="Administrators, services, and readers "
                                   "of the project in question.",
                       scope_types=["project"],
                       deprecated_rule=_LEGACY_ADMIN),
]

#: (rule name, default, what it allows, [(method, path)])
_RULES = [
    ("placement:resource_providers:%s" % action, ADMIN_OR_SERVICE,
     "%s resource providers." % action.capitalize(), [(method, path)])
    for action, method, path in (
        ("list", "GET", "/resource_providers"),
        ("create", "POST", "/resource_providers"),
        ("show", "GET", "/resource_providers/{uuid}"),
        ("update", "PUT", "/resource_providers/{uuid}"),
        ("delete", "DELETE", "/resource_providers/{uuid}"))
] + [
    ("placement:resource_classes:%s" % action, ADMIN_OR_SERVICE,
     "%s resource classes." % action.capitalize(), [(method, path)])
    for action, method, path in (
        ("list", "GET", "/resource_classes"),
        ("create", "POST", "/resource_classes"),
        ("show", "GET", "/resource_classes/{name}"),
        ("update", "PUT", "/resource_classes/{name}"),
        ("delete", "DELETE", "/resource_classes/{name}"))
] + [
    ("placement:resource_providers:inventories:%s" % action,
     ADMIN_OR_SERVICE, "%s a provider's inventories." % action.capitalize(),
     ops)
    for action, ops in (
        ("list", [("GET", "/resource_providers/{uuid}/inventories")]),
        ("create", [("POST", "/resource_providers/{uuid}/inventories")]),
        ("show", [("GET", "/resource_providers/{uuid}/inventories/"
                          "{resource_class}")]),
        ("update", [("PUT", "/resource_providers/{uuid}/inventories"),
                    ("PUT", "/resource_providers/{uuid}/inventories/"
                            "{resource_class}")]),
        ("delete", [("DELETE", "/resource_providers/{uuid}/inventories"),
                    ("DELETE", "/resource_providers/{uuid}/inventories/"
                               "{resource_class}")]))
] + [
    ("placement:resource_providers:aggregates:list", ADMIN_OR_SERVICE,
     "List a provider's aggregates.",
     [("GET", "/resource_providers/{uuid}/aggregates")]),
    ("placement:resource_providers:aggregates:update", ADMIN_OR_SERVICE,
     "Replace a provider's aggregates.",
     [("PUT", "/resource_providers/{uuid}/aggregates")]),
    ("placement:resource_providers:usages", ADMIN_OR_SERVICE,
     "Show a provider's usages.",
     [("GET", "/resource_providers/{uuid}/usages")]),
    ("placement:usages", PROJECT_READER,
     "Total usages of a project (or of one of its users).",
     [("GET", "/usages")]),
    ("placement:traits:list", ADMIN_OR_SERVICE, "List traits.",
     [("GET", "/traits")]),
    ("placement:traits:show", ADMIN_OR_SERVICE, "Show a trait.",
     [("GET", "/traits/{name}")]),
    ("placement:traits:update", ADMIN_OR_SERVICE,
     "Create a custom trait.", [("PUT", "/traits/{name}")]),
    ("placement:traits:delete", ADMIN_OR_SERVICE,
     "Delete a custom trait.", [("DELETE", "/traits/{name}")]),
    ("placement:resource_providers:traits:list", ADMIN_OR_SERVICE,
     "List a provider's traits.",
     [("GET", "/resource_providers/{uuid}/traits")]),
    ("placement:resource_providers:traits:update", ADMIN_OR_SERVICE,
     "Replace a provider's traits.",
     [("PUT", "/resource_providers/{uuid}/traits")]),
    ("placement:resource_providers:traits:delete", ADMIN_OR_SERVICE,
     "Remove every trait of a provider.",
     [("DELETE", "/resource_providers/{uuid}/traits")]),
    ("placement:allocations:manage", ADMIN_OR_SERVICE,
     "Write allocations of several consumers.", [("POST", "/allocations")]),
    ("placement:allocations:list", ADMIN_OR_SERVICE,
     "List a consumer's allocations.",
     [("GET", "/allocations/{consumer_uuid}")]),
    ("placement:allocations:update", ADMIN_OR_SERVICE,
     "Replace a consumer's allocations.",
     [("PUT", "/allocations/{consumer_uuid}")]),
    ("placement:allocations:delete", ADMIN_OR_SERVICE,
     "Delete a consumer's allocations.",
     [("DELETE", "/allocations/{consumer_uuid}")]),
    ("placement:resource_providers:allocations:list", ADMIN_OR_SERVICE,
     "List the allocations against a provider.",
     [("GET", "/resource_providers/{uuid}/allocations")]),
    ("placement:allocation_candidates:list", ADMIN_OR_SERVICE,
     "List allocation candidates.", [("GET", "/allocation_candidates")]),
    ("placement:reshaper:reshape", SERVICE,
     "Move inventories and allocations in one step.",
     [("POST", "/reshaper")]),
]


def list_rules():
    """Every rule with its default (the ``oslo.policy.policies`` entry
    point)."""
    return BASE_RULES + [
        policy.DocumentedRuleDefault(
            name=name, check_str=check, description=description,
            operations=[{"method": m, "path": p} for m, p in ops],
            scope_types=["project"])
        for name, check, description, ops in _RULES]


def enforcer(conf):
    """An oslo.policy Enforcer on ``conf`` with the defaults above."""
    result = policy.Enforcer(conf)
    result.suppress_default_change_warnings = True
    result.register_defaults(list_rules())
    result.load_rules()
    return result
