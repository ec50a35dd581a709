"""The scheduler-extender contract (upstream ``pkg/scheduler/framework/extender.go``, the
``Extender`` interface, and ``staging/src/k8s.io/kube-scheduler/extender/v1/types.go``).

An extender is an external process the scheduler consults after its own plugins: it may
filter the feasible nodes, add scores, take part in preemption and bind the pod itself. The
engine talks to extenders only through :class:`Extender`; the HTTP implementation is
:class:`kubesched.scheduler.extender.HTTPExtender`, and tests may pass in-process fakes
(``kubesched.testing.extenders``) as upstream's ``FakeExtender``.

Every method is synchronous: the scheduling cycle is. Errors are raised as
:class:`ExtenderError` (upstream returns ``error``); whether they fail the pod depends on
:meth:`Extender.is_ignorable` and the call site, exactly as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod
    from kubesched.framework.node_table import NodeInfo

__all__ = [
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "Extender",
    "ExtenderError",
    "FailedNodesMap",
    "HostPriority",
    "NodeInfoLookup",
    "Victims",
]

EXTENDER_NAME = "Extender"
"""Upstream ``framework.ExtenderName``: the "plugin" recorded in a pod's UnschedulablePlugins
when extenders filtered nodes out (such a pod is requeued by any cluster event)."""

MAX_EXTENDER_PRIORITY = 10
"""Upstream ``extenderv1.MaxExtenderPriority``: extender scores are 0..10 and are scaled by
``MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY`` (10) and the extender's weight."""

FailedNodesMap = dict[str, str]
"""Upstream ``extenderv1.FailedNodesMap``: node name → failure message."""


@dataclass
class Victims:
    """Upstream ``extenderv1.Victims``: the pods to evict (most important first) and how many of
    them violate a PodDisruptionBudget (preemption's candidates carry them too)."""

    pods: list[Pod]
    num_pdb_violations: int = 0


HostPriority = tuple[str, int]
"""Upstream ``extenderv1.HostPriority``: ``(host, score)``."""

NodeInfoLookup = Callable[[str], "NodeInfo | None"]
"""Resolves a node name to its NodeInfo (upstream ``NodeInfoLister.Get``)."""


class ExtenderError(Exception):
    """An extender call failed (transport error, non-200 answer, an ``error`` in the result, an
    answer that does not decode or names unknown nodes/pods). ``str()`` is upstream's text."""


@runtime_checkable
class Extender(Protocol):
    """Upstream ``framework.Extender`` (method names in snake_case)."""

    def name(self) -> str:
        """Identifies the extender (the HTTP extender's URL prefix)."""
        ...

    def is_ignorable(self) -> bool:
        """Errors of this extender are skipped instead of failing the pod."""
        ...

    def is_interested(self, pod: Pod) -> bool:
        """Whether to consult the extender for ``pod`` (upstream ``IsInterested``: no managed
        resources, or a container/init container requests or limits one of them)."""
        ...

    def is_filter(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_binder(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def filter(self, pod: Pod, nodes: list[Node]) -> tuple[list[Node], FailedNodesMap, FailedNodesMap]:
        """``(feasible subset of nodes, failedNodes, failedAndUnresolvableNodes)``.

        Raises:
            ExtenderError: the call failed (see the class docstring).
        """
        ...

    def prioritize(self, pod: Pod, nodes: list[Node]) -> tuple[list[HostPriority], int]:
        """``(scores 0..MAX_EXTENDER_PRIORITY per host, weight)``.

        Raises:
            ExtenderError: the call failed; the scheduler then ignores this extender's scores.
        """
        ...

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Bind the pod to ``node`` (upstream ``Bind(*v1.Binding)``).

        Raises:
            ExtenderError: binding failed.
        """
        ...

    def process_preemption(self, pod: Pod, node_to_victims: dict[str, Victims],
                           node_info: NodeInfoLookup) -> dict[str, Victims]:
        """Upstream ``ProcessPreemption``: the candidates (node → victims) the extender keeps,
        possibly with other victims; ``node_info`` resolves victims named by UID.

        Raises:
            ExtenderError: the call failed, or it named a node/pod the scheduler does not know.
        """
        ...
