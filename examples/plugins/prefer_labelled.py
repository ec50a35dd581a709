"""An out-of-tree kubesched plugin written in plain Python: ``PreferLabelled``.

Score: nodes carrying the label ``example.com/preferred=true`` get 100, the others 0. Filter:
nodes labelled ``example.com/draining=true`` are rejected as UnschedulableAndUnresolvable.

Load it without rebuilding anything::

    kubesched simulate -f manifests/ --config examples/plugins/prefer-labelled.yaml \\
        --plugin PreferLabelled=examples.plugins.prefer_labelled:new

(``examples.plugins.prefer_labelled`` is found from the repository root: the current directory
is searched, as ``PYTHONPATH`` is.) Per-node methods are enough; the framework loops over the nodes
still feasible. See ``docs/writing-plugins.md`` for the batch shape.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import Code, Status

NAME = "PreferLabelled"
ERR_REASON = "node(s) are draining"


class PreferLabelled:
    name = NAME

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        if node_info.node.metadata.labels.get("example.com/draining") == "true":
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        return (100 if node_info.node.metadata.labels.get("example.com/preferred") == "true" else 0), None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # a node's labels changing may lift the rejection
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]


def new(args: Any, handle: Any) -> PreferLabelled:
    return PreferLabelled()
