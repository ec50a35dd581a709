"""In-process fake scheduler extenders for tests (upstream
``pkg/scheduler/testing/framework/fake_extender.go``).

:class:`FakeExtender` implements :class:`~kubesched.framework.extender.Extender` with
predicates (``pod, node → Status``) and weighted prioritizers (``pod, nodes → [(host, score)]``),
as upstream's ``FakeExtender``; the predicate and prioritizer helpers keep upstream's names.
HTTP behaviour is tested against a real server instead (``tests/scheduler/test_extender_http.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.framework.extender import ExtenderError, FailedNodesMap, HostPriority, NodeInfoLookup, Victims
from kubesched.framework.interface import Code, Status

__all__ = [
    "FakeExtender",
    "PriorityConfig",
    "error_predicate_extender",
    "error_prioritizer_extender",
    "false_predicate_extender",
    "node1_predicate_extender",
    "node1_prioritizer_extender",
    "node2_predicate_extender",
    "node2_prioritizer_extender",
    "true_predicate_extender",
]

FitPredicate = Callable[[Pod, Node], Status | None]
PriorityFunc = Callable[[Pod, list[Node]], list[HostPriority]]


def error_predicate_extender(pod: Pod, node: Node) -> Status | None:
    return Status.of(Code.ERROR, "some error")


def false_predicate_extender(pod: Pod, node: Node) -> Status | None:
    return Status.of(Code.UNSCHEDULABLE, f'pod is unschedulable on the node "{node.metadata.name}"')


def true_predicate_extender(pod: Pod, node: Node) -> Status | None:
    return None


def _only(name: str) -> FitPredicate:
    def pred(pod: Pod, node: Node) -> Status | None:
        if node.metadata.name == name:
            return None
        return Status.of(Code.UNSCHEDULABLE, f'node "{node.metadata.name}" is not allowed')

    return pred


node1_predicate_extender = _only("node1")
node2_predicate_extender = _only("node2")


def error_prioritizer_extender(pod: Pod, nodes: list[Node]) -> list[HostPriority]:
    raise ExtenderError("some error")


def _prefer(name: str) -> PriorityFunc:
    def prio(pod: Pod, nodes: list[Node]) -> list[HostPriority]:
        return [(n.metadata.name, 10 if n.metadata.name == name else 1) for n in nodes]

    return prio


node1_prioritizer_extender = _prefer("node1")
node2_prioritizer_extender = _prefer("node2")


@dataclass
class PriorityConfig:
    function: PriorityFunc
    weight: int


@dataclass
class FakeExtender:
    """Upstream ``FakeExtender``: always a binder and preemption-capable; a filter when it has
    predicates, a prioritizer when it has prioritizers. ``binder`` (if set) is what ``bind``
    does; ``bound`` records ``(namespace, name, node)`` of each successful bind."""

    extender_name: str = "defaultFakeExtender"
    predicates: list[FitPredicate] = field(default_factory=list)
    prioritizers: list[PriorityConfig] = field(default_factory=list)
    weight: int = 0
    un_interested: bool = False
    ignorable: bool = False
    binder: Callable[[], None] | None = None
    bound: list[tuple[str, str, str]] = field(default_factory=list)
    filtered_nodes: list[Node] = field(default_factory=list)

    def name(self) -> str:
        return self.extender_name

    def is_ignorable(self) -> bool:
        return self.ignorable

    def is_interested(self, pod: Pod) -> bool:
        return not self.un_interested

    def is_filter(self) -> bool:
        return bool(self.predicates)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritizers)

    def is_binder(self) -> bool:
        return True

    def supports_preemption(self) -> bool:
        return True

    def _run_predicate(self, pod: Pod, node: Node) -> Status | None:
        for pred in self.predicates:
            st = pred(pod, node)
            if st is not None and not st.is_success():
                return st
        return None

    def filter(self, pod: Pod, nodes: list[Node]) -> tuple[list[Node], FailedNodesMap, FailedNodesMap]:
        filtered: list[Node] = []
        failed: FailedNodesMap = {}
        unresolvable: FailedNodesMap = {}
        for node in nodes:
            st = self._run_predicate(pod, node)
            name = node.metadata.name
            if st is None:
                filtered.append(node)
            elif st.code == Code.UNSCHEDULABLE:
                failed[name] = f'FakeExtender: node "{name}" failed'
            elif st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                unresolvable[name] = f'FakeExtender: node "{name}" failed and unresolvable'
            else:
                raise ExtenderError(st.message())
        self.filtered_nodes = filtered
        return filtered, failed, unresolvable

    def prioritize(self, pod: Pod, nodes: list[Node]) -> tuple[list[HostPriority], int]:
        combined: dict[str, int] = {}
        for pc in self.prioritizers:
            if pc.weight == 0:
                continue
            for host, score in pc.function(pod, nodes):
                combined[host] = combined.get(host, 0) + score * pc.weight
        return list(combined.items()), self.weight

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        if self.binder is not None:
            self.binder()
        self.bound.append((namespace, name, node))

    def process_preemption(self, pod: Pod, node_to_victims: dict[str, Victims],
                           node_info: NodeInfoLookup) -> dict[str, Victims]:
        """Upstream's non-node-cache-capable path: a node stays a candidate when the predicates
        accept it (the scheduler's victims kept as they are)."""
        out: dict[str, Victims] = {}
        for name, victims in node_to_victims.items():
            ni: Any = node_info(name)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{name}"')
            st = self._run_predicate(pod, ni.node)
            if st is None:
                out[name] = Victims(list(victims.pods), victims.num_pdb_violations)
            elif not st.is_rejected():
                raise ExtenderError(st.message())
        return out

