"""The primitives Gantt's unit tests read are what this nova sends."""

import json

from gantt.tests.nova_e2e import record_primitives


def test_recorded_primitives_are_current():
    """Regenerate with ``python -m gantt.tests.nova_e2e.record_primitives``
    when this fails (a new nova changed its objects)."""
    recorded = json.loads(record_primitives.PATH.read_text())

    assert record_primitives.record() == recorded
