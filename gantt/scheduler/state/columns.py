"""Keyed columns: free-form per-host dicts (capabilities, stats, metrics) as
numpy matrices, so that filters and weighers can read them for all hosts.

Strings are factorised: each key is a column of ``int32`` codes into that
key's list of distinct values, shifted by one (0 where the host does not
report the key). A rule on a string (an extra-spec expression, a version
predicate…) is then evaluated once per *distinct value*, and spread over
the rows with one lookup: ``lut[codes]``. Metrics are floats with NaN where
absent. Matrices are column-major, so that a key's column is contiguous.

Both families grow themselves (more keys) by swapping in bigger arrays, and
are copied with more rows by :meth:`grown` when the host table grows, like
every other column of :class:`~gantt.scheduler.state.table.HostTable`.
Readers always read the key index first and the array second, and check the
column number against the array's width, so a reader never indexes a
column its array does not have.
"""

import math

import numpy as np


class KeyIndex:
    """A growing name -> number map (names are never removed)."""

    def __init__(self, names=()):
        self.by_name = {}
        self.names = []
        for name in names:
            self.add(name)

    def add(self, name):
        code = self.by_name.get(name)
        if code is None:
            code = self.by_name[name] = len(self.names)
            self.names.append(name)
        return code

    def get(self, name):
        return self.by_name.get(name)

    def __len__(self):
        return len(self.names)


def spread(codes, lengths, cols, values, first_row=0):
    """Flat ``(rows, cols, values)`` of many rows that share few contents.

    Row ``first_row + i`` holds what distinct content ``codes[i]`` holds:
    ``lengths[k]`` columns and values of content ``k``, which follow each
    other in ``cols`` and ``values`` (flat sequences). For writing many
    rows with one fancy assignment: ``matrix[rows, cols] = values``.
    """
    codes = np.asarray(codes, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = lengths[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    total = int(counts.sum())
    rows = np.repeat(np.arange(first_row, first_row + len(codes)), counts)
    if not total:
        return rows, np.zeros(0, dtype=np.int64), np.zeros(0)
    starts = np.cumsum(lengths) - lengths
    row_starts = np.cumsum(counts) - counts
    at = np.repeat(starts[codes] - row_starts, counts) + np.arange(total)
    return rows, np.asarray(cols, dtype=np.int64)[at], np.asarray(
        values)[at]


# evaluated columns a StringColumns keeps (a few per plugin)
_KEPT = 64


def _widen(array, cols, fill):
    out = np.full((array.shape[0], cols), fill, dtype=array.dtype, order="F")
    out[:, :array.shape[1]] = array
    return out


def _lengthen(array, rows, fill):
    out = np.full((rows,) + array.shape[1:], fill, dtype=array.dtype,
                  order="F")
    out[:array.shape[0]] = array
    return out


def _coded(value):
    """The distinct-value key of a reported value: a string as it is;
    a typed one (a standalone provider's capability: int, float, bool)
    with its type, since ``True == 1 == 1.0`` would otherwise share one
    code, and a filter must see each as it was reported."""
    return value if type(value) is str else (type(value), value)


def _value(key):
    """The reported value of a :func:`_coded` key."""
    return key if type(key) is str else key[1]


class StringColumns:
    """``{key: value}`` per row, as factorised code columns.

    Values are strings (what compute nodes report, and their stats) or,
    for standalone providers' capabilities, the typed values reported
    (str, int, float, bool): a rule sees each value as it was reported.
    """

    def __init__(self, rows, cols=4):
        self.keys = KeyIndex()
        self.values = []            # per key: KeyIndex of distinct values
        self.codes = np.zeros((rows, cols), dtype=np.int32, order="F")
        # bumped after every change of a code; evaluations named by their
        # meaning are kept against it (see evaluate())
        self.version = 0
        self._kept = {}

    def grown(self, rows):
        new = StringColumns.__new__(StringColumns)
        new.keys = KeyIndex(self.keys.names)
        new.values = [KeyIndex(v.names) for v in self.values]
        new.codes = _lengthen(self.codes, rows, 0)
        new.version = self.version + 1
        new._kept = {}
        return new

    def write(self, row, mapping):
        """Replace row ``row`` with ``mapping`` (writers hold the lock)."""
        missing = [k for k in mapping if self.keys.get(k) is None]
        needed = len(self.keys) + len(missing)
        if needed > self.codes.shape[1]:
            self.codes = _widen(self.codes, max(needed,
                                                2 * self.codes.shape[1]), 0)
        for key in missing:
            self.keys.add(key)
            self.values.append(KeyIndex())
        codes = self.codes
        coded = np.zeros(codes.shape[1], dtype=np.int32)
        for key, value in mapping.items():
            col = self.keys.get(key)
            coded[col] = self.values[col].add(_coded(value)) + 1
        # most reports repeat the row: then nothing is written, and what
        # was evaluated from the codes stays good
        if not np.array_equal(codes[row], coded):
            codes[row] = coded
            self.version += 1

    def write_coded(self, first_row, codes, mappings):
        """Like :meth:`write` of ``mappings[codes[i]]`` into row
        ``first_row + i``, for rows that hold nothing yet: each distinct
        mapping is encoded once."""
        for mapping in mappings:
            for key in mapping:
                if self.keys.get(key) is None:
                    self.keys.add(key)
                    self.values.append(KeyIndex())
        if len(self.keys) > self.codes.shape[1]:
            self.codes = _widen(self.codes, max(
                len(self.keys), 2 * self.codes.shape[1]), 0)
        patterns = np.zeros((len(mappings), self.codes.shape[1]),
                            dtype=np.int32)
        for k, mapping in enumerate(mappings):
            for key, value in mapping.items():
                col = self.keys.get(key)
                patterns[k, col] = self.values[col].add(_coded(value)) + 1
        self.codes[first_row:first_row + len(codes)] = patterns[codes]
        self.version += 1

    def evaluate(self, key, n, func, missing, dtype=bool, meaning=None):
        """``func(value)`` for each row's value of ``key``; ``missing`` for
        rows that do not report it. ``func`` runs once per distinct value.

        :param meaning: a hashable name for what ``func`` computes (equal
            only for functions that give equal results): the column is
            then kept, shared and read-only, until a code changes, as
            reports mostly repeat what a host said before
        """
        if meaning is None:
            return self._evaluate(key, n, func, missing, dtype)
        name = (key, meaning, missing, dtype)
        # NOTE: the version is read before the column is built: a write
        # meanwhile leaves it under a version no later reader accepts
        stamp = (self.version, n)
        held = self._kept.get(name)
        if held is not None and held[0] == stamp:
            return held[1]
        out = self._evaluate(key, n, func, missing, dtype)
        out.flags.writeable = False
        if len(self._kept) >= _KEPT:
            self._kept.clear()
        self._kept[name] = (stamp, out)
        return out

    def _evaluate(self, key, n, func, missing, dtype):
        col = self.keys.get(key)
        codes = self.codes
        if col is None or col >= codes.shape[1]:
            return np.full(n, missing, dtype=dtype)
        values = [_value(v) for v in self.values[col].names]
        lut = np.empty(len(values) + 1, dtype=dtype)
        lut[0] = missing
        for i, value in enumerate(values):
            lut[i + 1] = func(value)
        # NOTE: a value appended after ``values`` was read (a report written
        # meanwhile) is clipped to the last one read: that row is then read
        # half-updated, like any row a report changes under a request
        return lut.take(codes[:n, col], mode="clip")


def as_float(value, default=0.0):
    """``float(value)`` for a reported string, ``default`` if it is not a
    finite number (agents report stats as strings)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


class FloatColumns:
    """``{key: float}`` per row; NaN where a host does not report a key."""

    def __init__(self, rows, cols=4):
        self.keys = KeyIndex()
        self.data = np.full((rows, cols), np.nan, order="F")

    def grown(self, rows):
        new = FloatColumns.__new__(FloatColumns)
        new.keys = KeyIndex(self.keys.names)
        new.data = _lengthen(self.data, rows, np.nan)
        return new

    def write(self, row, mapping):
        missing = [k for k in mapping if self.keys.get(k) is None]
        needed = len(self.keys) + len(missing)
        if needed > self.data.shape[1]:
            self.data = _widen(self.data, max(needed,
                                              2 * self.data.shape[1]), np.nan)
        for key in missing:
            self.keys.add(key)
        data = self.data
        data[row] = np.nan
        for key, value in mapping.items():
            data[row, self.keys.get(key)] = float(value)

    def write_coded(self, first_row, codes, mappings):
        """Like :meth:`write`, for many rows that hold nothing yet (see
        :meth:`StringColumns.write_coded`)."""
        for mapping in mappings:
            for key in mapping:
                self.keys.add(key)
        if len(self.keys) > self.data.shape[1]:
            self.data = _widen(self.data, max(
                len(self.keys), 2 * self.data.shape[1]), np.nan)
        patterns = np.full((len(mappings), self.data.shape[1]), np.nan)
        for k, mapping in enumerate(mappings):
            for key, value in mapping.items():
                patterns[k, self.keys.get(key)] = float(value)
        self.data[first_row:first_row + len(codes)] = patterns[codes]

    def column(self, key, n):
        """The first ``n`` values of ``key`` (NaN = absent)."""
        col = self.keys.get(key)
        data = self.data
        if col is None or col >= data.shape[1]:
            return np.full(n, np.nan)
        return data[:n, col]
