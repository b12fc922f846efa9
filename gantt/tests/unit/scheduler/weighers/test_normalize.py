"""What the weigher runner keeps of shared columns (``ColumnFacts``)."""

import threading

import numpy as np

from gantt.scheduler.pipeline.weighers import normalize


def _shared(values):
    column = np.array(values, dtype=float)
    column.flags.writeable = False
    return column


def test_extremes_are_kept_while_the_column_lives():
    facts = normalize.ColumnFacts()
    column = _shared([3, 1, 4, 1, 5])
    found = facts.extremes(column)
    assert found == normalize.Extremes(argmin=1, argmax=4)
    assert facts.extremes(column) is found
    # an equal column is another column: its own facts
    assert facts.extremes(_shared([3, 1, 4, 1, 5])) is not found


def test_a_split_is_the_most_common_value_and_the_rows_that_differ():
    facts = normalize.ColumnFacts()
    split = facts.split(_shared([1, 3, 1, 1, 0.5]))
    assert split.default == 1.0
    assert list(split.rows) == [1, 4]
    assert list(split.deltas) == [2.0, -0.5]
    constant = facts.split(2.0)
    assert constant.default == 2.0 and not len(constant.rows)
    assert facts.split(np.ones(3)) is None       # not a shared column


def test_at_most_kept_columns_are_held():
    facts = normalize.ColumnFacts(kept=4)
    columns = [_shared([i, i + 1]) for i in range(10)]
    for column in columns:
        facts.extremes(column)
    assert len(facts._extremes) <= 4
    assert facts.extremes(columns[0]) == (0, 1)


def test_threads_sharing_one_runner_get_each_columns_facts():
    facts = normalize.ColumnFacts(kept=3)
    columns = [_shared(np.roll(np.arange(50.0), i)) for i in range(12)]
    wrong = []

    def read():
        for _ in range(200):
            for i, column in enumerate(columns):
                found = facts.extremes(column)
                if (found.argmin, found.argmax) != (i % 50, (i + 49) % 50):
                    wrong.append((i, found))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
