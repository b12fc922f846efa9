"""Docs that cannot drift: the reference pages against the code.

A new RPC method, a version bump or a plugin added to ``setup.cfg``
fails here until the page that documents it says so: the wire reference
(doc/source/wire/index.rst) is what external callers write their
primitives from, and the scheduling guide (doc/source/admin/scheduling.rst)
is where operators look a plugin name up.
"""

import configparser
import inspect
import pathlib
import re

import pytest

import gantt
from gantt import objects
from gantt import rpcapi
from gantt.rpcapi import client as rpc_client
from gantt.rpcapi import server
from gantt.rpcapi import versions

objects.register_all()

TREE = pathlib.Path(gantt.__file__).parent.parent
WIRE = TREE / "doc" / "source" / "wire" / "index.rst"
SCHEDULING = TREE / "doc" / "source" / "admin" / "scheduling.rst"

# a heading's underline, by the character reST sections use here
_UNDERLINE = re.compile(r"^([=\-~^])\1{2,}$")
_RPC_VERSION = re.compile(r"\(RPC API (\d+\.\d+)\)")
_HISTORY_ENTRY = re.compile(r"^\* (\d+\.\d+) - ", re.MULTILINE)


# -- reST, read as far as these pages need ---------------------------------

def _sections(text, level):
    """``{title: body}`` of the sections underlined with ``level``: each
    body runs to the next heading of that level (a document title's
    overline is not told apart, which these pages do not need)."""
    lines = text.splitlines()
    starts = [i - 1 for i, line in enumerate(lines)
              if i and _UNDERLINE.match(line) and line[0] == level
              and lines[i - 1].strip()
              and len(line) >= len(lines[i - 1].rstrip())]
    bounds = starts[1:] + [len(lines)]
    return {lines[s].strip(): "\n".join(lines[s + 2:e])
            for s, e in zip(starts, bounds, strict=True)}


def _simple_table_first_column(body):
    """The first-column cells of the first simple table in ``body``; a row
    whose first cell is empty continues the row above and is skipped."""
    lines = body.splitlines()
    borders = [i for i, line in enumerate(lines)
               if re.match(r"^=+( +=+)+\s*$", line)]
    width = len(lines[borders[0]].split()[0])
    rows = lines[borders[1] + 1:borders[2]]
    return [row[:width].strip() for row in rows if row[:width].strip()]


def _plugin_names(cell):
    """``"SameHostFilter / DifferentHostFilter"`` -> both names; a note in
    brackets after a name (``(Gantt's)``, ``(volume)``) is not a name."""
    names = re.sub(r"\([^)]*\)", "", cell).split("/")
    return [name.strip() for name in names if name.strip()]


# -- the code's side ----------------------------------------------------------

def _served_methods():
    """What a worker answers: the endpoint's public methods (oslo.messaging
    dispatches to any public attribute of the endpoint's class)."""
    return sorted(name for name, member in
                  vars(server.SchedulerEndpoint).items()
                  if inspect.isfunction(member) and not name.startswith("_"))


def _history():
    """``[(version, text)]``: the RPC API history in the client's
    docstring, the record of which version added what."""
    doc = rpc_client.__doc__
    marks = list(_HISTORY_ENTRY.finditer(doc))
    ends = [m.start() for m in marks[1:]]
    ends.append(doc.index("\n\n", marks[-1].end()))
    return [(m.group(1), doc[m.end():end])
            for m, end in zip(marks, ends, strict=True)]


def _added_in():
    """``{method: version}``: the first history entry naming a method is
    the version that added it."""
    added = {}
    for version, text in _history():
        for method in _served_methods():
            if re.search(r"\b%s\b" % method, text):
                added.setdefault(method, version)
    return added


def _entry_points(group):
    """Names under ``group`` in ``setup.cfg``'s entry points: the source
    the package's metadata is built from, read without an install."""
    parser = configparser.ConfigParser()
    parser.read(TREE / "setup.cfg")
    value = parser["options.entry_points"][group]
    return sorted(line.split("=")[0].strip()
                  for line in value.splitlines() if line.strip())


# -- the wire reference's side ------------------------------------------------

def _rpc_chapter():
    return _sections(WIRE.read_text(), "=")["RPC API"]


def _documented_methods():
    """``{method: version}`` as the RPC API chapter states them: a section
    named after a method is 1.0 unless its title says ``(RPC API X.Y)``;
    a method's ``name`` term inside a grouped section has the section's
    version, or its own ``(RPC API X.Y)`` after the term."""
    found = {}
    for title, body in _sections(_rpc_chapter(), "-").items():
        match = _RPC_VERSION.search(title)
        if match is None:
            found[title] = "1.0"
            continue
        for term, own in _definition_terms(body):
            found[term] = own or match.group(1)
    return found


def _definition_terms(body):
    """``[(name, version or None)]`` of the ````name```` terms of a
    definition list: a term line starts at the margin and the line after
    it is indented."""
    lines = body.splitlines()
    terms = []
    for line, after in zip(lines, lines[1:], strict=False):
        match = re.match(r"^``(\w+)``(.*)$", line)
        if match and after.startswith(" "):
            own = _RPC_VERSION.search(match.group(2))
            terms.append((match.group(1), own and own.group(1)))
    return terms


# -- the tests ----------------------------------------------------------------

def test_the_wire_reference_names_the_version_workers_serve():
    assert server.SchedulerEndpoint.target.version == rpcapi.RPC_API_VERSION
    intro = _rpc_chapter().strip().split("\n\n")[0]
    assert "Workers serve RPC API **%s**" % rpcapi.RPC_API_VERSION in intro


def test_the_history_records_every_version_and_every_method():
    """The client's history is what the reference's versions are checked
    against: each version in versions.py has its entry, and each served
    method is named by the entry that added it."""
    assert [v for v, _ in _history()] == sorted(versions.OBJECT_VERSIONS,
                                                key=versions.parse)
    assert set(_added_in()) == set(_served_methods())


def test_every_served_method_is_documented_at_the_version_that_added_it():
    documented = _documented_methods()
    missing = sorted(set(_served_methods()) - set(documented))
    assert not missing, "no section in %s for %s" % (WIRE.name, missing)
    wrong = {m: (documented[m], v) for m, v in _added_in().items()
             if documented[m] != v}
    assert not wrong, "documented (doc, code) versions differ: %s" % wrong


def test_the_wire_reference_documents_no_method_workers_lack():
    stale = sorted(set(_documented_methods()) - set(_served_methods()))
    assert not stale, "%s documents unserved methods %s" % (WIRE.name, stale)


def _newest_objects():
    return versions.OBJECT_VERSIONS[max(versions.OBJECT_VERSIONS,
                                        key=versions.parse)]


@pytest.mark.parametrize("name", sorted(_newest_objects()))
def test_every_object_on_the_wire_is_named_in_the_reference(name):
    assert "``%s``" % name in WIRE.read_text() or (
        "`%s`_" % name in WIRE.read_text()), name


@pytest.mark.parametrize("name", sorted(
    set(_newest_objects()) & set(_sections(WIRE.read_text(), "~"))))
def test_an_object_section_opens_with_the_current_version(name):
    """A section may describe later versions after the first one's table,
    but opens with the version a worker reads today, which is what a
    caller looks for."""
    body = _sections(WIRE.read_text(), "~")[name].strip()
    current = _newest_objects()[name]
    assert re.match(r"Version %s\b" % re.escape(current), body), (
        "%s's section does not open with 'Version %s'" % (name, current))


@pytest.mark.parametrize("kind, group", [
    ("Filters", "gantt.scheduler.filters"),
    ("Weighers", "gantt.scheduler.weighers")])
def test_the_scheduling_guide_lists_exactly_the_plugins(kind, group):
    """The guide's table of each kind names every entry point, and names
    nothing that is not one (a renamed or dropped plugin)."""
    body = _sections(SCHEDULING.read_text(), "=")[kind]
    listed = sorted(name for cell in _simple_table_first_column(body)
                    for name in _plugin_names(cell))
    assert listed == _entry_points(group)
