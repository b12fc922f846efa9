"""The layers of the package, enforced: who may import whom.

The scheduler's folders follow the data flow (intake → state → pipeline →
claims → selections) and each layer may only look down. The rules below
are read from every module's own ``import`` statements (an ``ast`` walk,
no import is executed), so a violation names the module and the line.

A rule is ``(who, may not import, why)``; ``who`` and the forbidden names
are dotted prefixes matched on whole components (``gantt.rpc`` forbids
``gantt.rpc`` and ``gantt.rpc.x``, not ``gantt.rpcapi``).
"""

import ast
import pathlib

import pytest

import gantt

_SERVICES = ("gantt.scheduler.claims", "gantt.scheduler.placer",
             "gantt.scheduler.operator", "gantt.scheduler.lookups",
             "gantt.scheduler.explain", "gantt.scheduler.manager")
_EDGE = ("oslo_messaging", "gantt.rpc", "gantt.rpcapi.client",
         "gantt.rpcapi.server", "gantt.service", "gantt.cmd",
         "gantt.notifier")

RULES = (
    ("gantt.objects",
     ("gantt.db", "gantt.scheduler") + _EDGE,
     "wire objects are data: they know neither storage nor the engine"),
    ("gantt.db",
     ("gantt.scheduler",) + _EDGE,
     "the database layer serves the scheduler, never the other way"),
    ("gantt.scheduler",
     _EDGE,
     "the engine runs without a broker: only rpcapi/ and service.py "
     "speak oslo.messaging"),
    ("gantt.scheduler",
     ("gantt.simulate",),
     "the simulator drives the engine; the engine never knows it"),
    ("gantt.simulate",
     _EDGE,
     "the simulator runs the engine in-process; reading a live Gantt "
     "over RPC is its command's business (cmd/simulate.py)"),
    ("gantt.scheduler.pipeline",
     ("gantt.db", "gantt.scheduler.intake") + _SERVICES,
     "the pipeline reads a view and writes nothing"),
    ("gantt.scheduler.state",
     ("gantt.scheduler.pipeline",) + _SERVICES,
     "state is what the pipeline reads; it does not rank or claim"),
    ("gantt.scheduler.intake",
     ("gantt.scheduler.pipeline", "gantt.scheduler.placer",
      "gantt.scheduler.operator", "gantt.scheduler.explain"),
     "intake takes reports into state; it never ranks hosts"),
)

ROOT = pathlib.Path(gantt.__file__).parent


def _covers(prefix, name):
    return name == prefix or name.startswith(prefix + ".")


def imported_names(source):
    """``(line, dotted name)`` of every import in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, node.module + "." + alias.name


def violations(module, source, rules=RULES):
    """Lines of ``source`` (the text of ``module``) that break a rule."""
    for who, forbidden, why in rules:
        if not _covers(who, module):
            continue
        lines = {}
        for line, name in imported_names(source):
            if any(_covers(bad, name) for bad in forbidden):
                lines.setdefault(line, name)
        for line, name in sorted(lines.items()):
            yield "%s:%d imports %s (%s)" % (module, line, name, why)


def product_modules():
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT.parent).with_suffix("")
        if "tests" in relative.parts:
            continue
        parts = relative.parts[:-1] if relative.name == "__init__" else \
            relative.parts
        yield ".".join(parts), path


def test_every_module_keeps_to_its_layer():
    found = [v for module, path in product_modules()
             for v in violations(module, path.read_text())]
    assert found == []


@pytest.mark.parametrize("module, source, expected", [
    ("gantt.scheduler.pipeline.filters.x", "from gantt.db import api\n",
     "gantt.scheduler.pipeline.filters.x:1 imports gantt.db"),
    ("gantt.scheduler.state.cache",
     "import os\nfrom gantt.scheduler.pipeline import request\n",
     "gantt.scheduler.state.cache:2 imports gantt.scheduler.pipeline"),
    ("gantt.scheduler.placer", "import oslo_messaging\n",
     "gantt.scheduler.placer:1 imports oslo_messaging"),
    ("gantt.objects.spec", "from gantt import rpc\n",
     "gantt.objects.spec:1 imports gantt.rpc"),
])
def test_a_forbidden_import_is_named_with_its_line(module, source,
                                                    expected):
    [found] = violations(module, source)
    assert found.startswith(expected + " (")


@pytest.mark.parametrize("module, source", [
    ("gantt.scheduler.pipeline.request", "from gantt import rpcapi\n"),
    ("gantt.scheduler.intake.wire", "from gantt.rpcapi import validate\n"),
    ("gantt.rpcapi.server", "import oslo_messaging\n"),
    ("gantt.scheduler.state.cache", "from gantt.db import host_load\n"),
])
def test_what_the_rules_allow(module, source):
    assert list(violations(module, source)) == []


def test_every_product_module_is_walked():
    walked = dict(product_modules())
    assert "gantt.scheduler.pipeline.filters.compute_status" in walked
    assert "gantt.scheduler.state" in walked
    assert not any("tests" in name for name in walked)
