"""Resource classes and traits by name, as Placement's API lists them.

The standard ones are os-resource-classes' and os-traits' (never stored,
never changed). A custom one (``CUSTOM_*``) exists once it is defined
through the REST API (rows of ``resource_classes`` / ``traits``, migration
0012) or once a provider reports it: a report may name a custom class or
trait no one defined, and Placement's callers then see it defined.
"""

import dataclasses
import datetime

import os_resource_classes
import os_traits
from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from gantt.db.models import ALLOC
from gantt.db.models import CUSTOM_CLASSES
from gantt.db.models import CUSTOM_TRAITS
from gantt.db.models import INV
from gantt.db.models import TRAITS

STANDARD_CLASSES = tuple(os_resource_classes.STANDARDS)
STANDARD_TRAITS = frozenset(os_traits.get_traits())


@dataclasses.dataclass(frozen=True)
class Name:
    """A class or trait and when it was defined (None: standard, or
    reported without being defined)."""

    name: str
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None


class Vocabulary:
    """One kind of name: classes or traits."""

    def __init__(self, table, standard, used):
        self.table = table
        self.standard = standard
        self._used = used          # (table, column) holding names in use

    def all(self, conn):
        """Every defined name: standard, then custom by name."""
        custom = self._custom(conn)
        return [Name(n) for n in self.standard] + [
            custom[n] for n in sorted(custom)]

    def _custom(self, conn):
        custom = {r.name: Name(r.name, r.created_at, r.updated_at)
                  for r in conn.execute(sa.select(self.table))}
        for table, column in self._used:
            for (name,) in conn.execute(
                    sa.select(table.c[column]).distinct()
                    .where(table.c[column].like("CUSTOM\\_%", escape="\\"))):
                custom.setdefault(name, Name(name))
        return custom

    def get(self, conn, name):
        """The :class:`Name`, or None if not defined."""
        if name in self.standard:
            return Name(name)
        return self._custom(conn).get(name)

    def known(self, conn, names):
        """Those of ``names`` that are defined."""
        names = set(names)
        standard = names & set(self.standard)
        if standard == names:
            return standard
        return standard | (names & set(self._custom(conn)))

    def create(self, conn, name):
        """Define a custom name; False if it was defined already."""
        if self.get(conn, name) is not None:
            return False
        try:
            with conn.begin_nested():
                conn.execute(self.table.insert().values(
                    name=name, created_at=timeutils.utcnow()))
        except db_exc.DBDuplicateEntry:
            return False
        return True

    def in_use(self, conn, name):
        return any(conn.execute(
            sa.select(table.c[column]).where(table.c[column] == name)
            .limit(1)).first() is not None for table, column in self._used)

    def delete(self, conn, name):
        """Forget a custom name; False if it was not stored."""
        return conn.execute(self.table.delete().where(
            self.table.c.name == name)).rowcount > 0

    def rename(self, conn, old, new):
        conn.execute(self.table.update().where(self.table.c.name == old)
                     .values(name=new, updated_at=timeutils.utcnow()))


CLASSES = Vocabulary(CUSTOM_CLASSES, STANDARD_CLASSES,
                     ((INV, "resource_class"), (ALLOC, "resource_class")))
TRAIT_NAMES = Vocabulary(CUSTOM_TRAITS, tuple(sorted(STANDARD_TRAITS)),
                         ((TRAITS, "trait"),))
