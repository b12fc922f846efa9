"""Agents' reports as a cast delivers them, for the intake's tests."""

import json

from gantt.tests import factories


def primitive(node, version=None):
    """``node`` as a cast delivers it: a primitive through JSON."""
    made = (node.obj_to_primitive(target_version=version) if version
            else node.obj_to_primitive())
    return json.loads(json.dumps(made))


def node(name="host1", sequence=10, **fields):
    """An agent's ComputeNode (``factories.compute_node_obj``)."""
    return factories.compute_node_obj(name, sequence=sequence, **fields)


def data(made):
    """The fields of a primitive."""
    return made["gantt_object.data"]
