"""What every input file of a simulation shares: its error, and YAML with
line numbers.

An operator's file that does not parse, or says something the simulator
cannot use, raises :class:`InputError` naming the file and the line; the
console script prints that one line and exits 2, never a traceback.
"""

import yaml


class InputError(ValueError):
    """A fleet, workload or trace file the simulator cannot use.

    :attr path: the file
    :attr line: its 1-based line, or None when the file as a whole is wrong
    """

    def __init__(self, path, line, message):
        self.path = path
        self.line = line
        self.message = message
        where = "%s:%d" % (path, line) if line else str(path)
        super().__init__("%s: %s" % (where, message))


class _Loader(yaml.SafeLoader):
    """SafeLoader whose mappings remember their line (as ``__line__``)."""


def _mapping(loader, node):
    mapping = loader.construct_mapping(node, deep=True)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(path):
    """The document of a YAML file, every mapping with its ``__line__``.

    :raises: InputError (unreadable, or not YAML)
    """
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.load(f, Loader=_Loader)  # noqa: S506 (SafeLoader)
    except OSError as exc:
        raise InputError(path, None, exc.strerror or str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(path, mark.line + 1 if mark else None,
                         "not valid YAML: %s" % problem) from None


class Fields:
    """Typed reads of one YAML mapping, each error with its line."""

    def __init__(self, path, mapping, what):
        if not isinstance(mapping, dict):
            raise InputError(path, None, "%s must be a mapping" % what)
        self.path = path
        self.mapping = mapping
        self.line = mapping.get("__line__")
        self.what = what

    def error(self, message):
        return InputError(self.path, self.line, "%s: %s" % (self.what,
                                                            message))

    def number(self, key, default=None, kind=float, minimum=0):
        value = self.mapping.get(key, default)
        if value is None:
            raise self.error("%r is required" % key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error("%r must be a number, not %r" % (key, value))
        if kind is int and value != int(value):
            raise self.error("%r must be a whole number, not %r"
                             % (key, value))
        if value < minimum:
            raise self.error("%r must be at least %s, not %r"
                             % (key, minimum, value))
        return kind(value)

    def text(self, key, default=None):
        value = self.mapping.get(key, default)
        if not isinstance(value, str) or not value:
            raise self.error("%r must be a non-empty string" % key)
        return value

    def check_known(self, known):
        unknown = sorted(set(self.mapping) - set(known) - {"__line__"})
        if unknown:
            raise self.error("unknown key(s) %s (known: %s)"
                             % (", ".join(map(str, unknown)),
                                ", ".join(known)))
