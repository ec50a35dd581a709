"""A per-pod-object memo for QueueingHints (kubesched-only; no upstream counterpart).

Upstream's hints re-derive a pending pod's parsed spec (affinity terms, node affinity) on every
cluster event (e.g. ``interpodaffinity/plugin.go`` ``isSchedulableAfterAssignedPodChange`` calls
``framework.GetAffinityTerms`` per call). kubesched runs the same hints for every unschedulable
pod on every assigned-pod event, so a 1,000-pod event workload re-parses the same few selectors
hundreds of thousands of times. :class:`PodMemo` keeps the derived value per pod *object*.

Validity: kubesched never mutates a ``Pod`` in place after it is stored — an update replaces the
object (store, cache and queue all swap in the new one) — so an entry is keyed by ``id(pod)``
and served only while the entry's pod ``is`` the asked pod and its uid and resourceVersion are
unchanged. The entry holds a reference to its pod, so the id cannot be recycled while the entry
lives. The memo is bounded (oldest entries dropped first), so it never pins more than
``capacity`` pods; callers should memoise only pods whose derivation is not trivial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod

__all__ = ["PodMemo"]

T = TypeVar("T")


class PodMemo(Generic[T]):
    """``get(pod)`` = ``derive(pod)``, computed once per pod object (see module docstring).

    ``derive`` must be a pure function of the pod. An exception it raises is not memoised (it
    propagates, and the next call derives again)."""

    __slots__ = ("_derive", "_entries", "capacity")

    def __init__(self, derive: Callable[[Pod], T], capacity: int = 8192) -> None:
        self._derive = derive
        self._entries: dict[int, tuple[Pod, str, str, T]] = {}
        self.capacity = capacity

    def get(self, pod: Pod) -> T:
        meta = pod.metadata
        e = self._entries.get(id(pod))
        if e is not None and e[0] is pod and e[1] == meta.uid and e[2] == meta.resource_version:
            return e[3]
        value = self._derive(pod)
        entries = self._entries
        if len(entries) >= self.capacity:
            try:  # drop the oldest entry (dicts keep insertion order)
                del entries[next(iter(entries))]
            except (KeyError, RuntimeError, StopIteration):  # a concurrent caller got there first
                pass
        entries[id(pod)] = (pod, meta.uid, meta.resource_version, value)
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
