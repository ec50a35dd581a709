"""The NodeTable is the scheduling cycle's snapshot: nothing may change it between PreFilter and
Score (upstream takes an immutable ``Snapshot`` per cycle). With debug checks on (the whole
suite runs with ``KUBESCHED_DEBUG=1``), a change inside the cycle is an error, not a silent
inconsistency."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.framework.interface import Status
from kubesched.framework.node_table import TableChangedError, debug_checks
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.testing.wrappers import MakeNode, MakePod


class _AddsANode:
    """A Filter plugin that (wrongly) adds a node to the cluster while filtering."""

    name = "AddsANode"

    def __init__(self) -> None:
        self.sched: Any = None

    def filter(self, state: Any, pod: Any, ni: Any) -> Status | None:
        if "late" not in self.sched.table.row_of:
            self.sched.cache.add_node(MakeNode().name("late").capacity(cpu="1", pods="10").obj())
        return None


def _scheduler(plugin: _AddsANode) -> Scheduler:
    cfg = decode_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
            "filter": {"enabled": [{"name": "AddsANode"}]}}}]})
    sched = Scheduler(cfg, registry={**in_tree_registry(), "AddsANode": lambda args, handle: plugin})
    plugin.sched = sched
    for i in range(3):
        sched.on_node_add(MakeNode().name(f"n{i}").capacity(cpu="4", pods="10").obj())
    return sched


def test_a_table_change_inside_the_scheduling_cycle_is_an_error() -> None:
    assert debug_checks(), "the suite runs with KUBESCHED_DEBUG=1 (tests/conftest.py)"
    sched = _scheduler(_AddsANode())
    sched.on_pod_add(MakePod().name("p").uid("p").obj())
    with pytest.raises(TableChangedError):
        sched.scheduling_cycle()
