"""The in-memory cluster: the simulator's API server.

:class:`ClusterStore` holds typed objects (for the engine) and, for objects read from
manifests, the raw mapping (for output: every input object comes back, updated). It implements
:class:`~kubesched.framework.handle.ClusterLister` and
:class:`~kubesched.framework.handle.ClusterClient`; a bind or a status patch updates the object
and notifies the attached scheduler exactly as an informer would (``on_pod_update``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api.objects import Node, Pod, PodCondition, pod_key
from kubesched.errors import BindError

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.scheduler import Scheduler

__all__ = ["ClusterStore"]


class ClusterStore:
    """Objects by kind; pods by ``namespace/name``; nodes by name.

    ``raw`` maps ``(kind, namespace, name)`` → the input mapping (kept in sync with the typed
    object on bind / condition updates). ``events`` collects ``(type, reason, object key,
    message)`` as the event recorder would emit them; set ``keep_events=False`` to drop them.
    """

    def __init__(self, *, keep_events: bool = True) -> None:
        self.pods: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.objects: dict[str, dict[tuple[str, str], Any]] = {}
        self.raw: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.events: list[tuple[str, str, str, str]] = []
        self.event_counts: Counter[str] = Counter()
        self.keep_events = keep_events
        self.scheduler: Scheduler | None = None
        self.bind_count = 0

    # ───────────────────────────── lister ─────────────────────────────

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        if kind == "Pod":
            return [p for p in self.pods.values() if namespace is None or p.metadata.namespace == namespace]
        if kind == "Node":
            return list(self.nodes.values())
        objs = self.objects.get(kind, {})
        if namespace is None:
            return list(objs.values())
        return [o for (ns, _), o in objs.items() if ns == namespace]

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        if kind == "Pod":
            return self.pods.get(f"{namespace}/{name}")
        if kind == "Node":
            return self.nodes.get(name)
        return self.objects.get(kind, {}).get((namespace or "", name))

    # ───────────────────────────── writes from the driver ─────────────────────────────

    def add(self, kind: str, obj: Any, raw: dict[str, Any] | None = None) -> None:
        """Add an object; pods and nodes are announced to the scheduler."""
        meta = obj.metadata
        if raw is not None:
            self.raw[(kind, meta.namespace or "", meta.name)] = raw
        if kind == "Pod":
            self.pods[pod_key(obj)] = obj
            if self.scheduler is not None:
                self.scheduler.on_pod_add(obj)
        elif kind == "Node":
            self.nodes[meta.name] = obj
            if self.scheduler is not None:
                self.scheduler.on_node_add(obj)
        else:
            self.objects.setdefault(kind, {})[(meta.namespace or "", meta.name)] = obj

    def add_raw(self, kind: str, data: dict[str, Any]) -> None:
        """Keep an object of a kind without a typed view, as its raw mapping (the lister returns it)."""
        meta = data.get("metadata") or {}
        self.objects.setdefault(kind, {})[(meta.get("namespace") or "", meta.get("name", ""))] = data

    def remove_pod(self, key: str) -> Pod | None:
        pod = self.pods.pop(key, None)
        if pod is not None and self.scheduler is not None:
            self.scheduler.on_pod_delete(pod)
        return pod

    def remove_node(self, name: str) -> Node | None:
        node = self.nodes.pop(name, None)
        if node is not None and self.scheduler is not None:
            self.scheduler.on_node_delete(node)
        return node

    def _replace_pod(self, old: Pod, new: Pod) -> None:
        self.pods[pod_key(new)] = new
        if self.scheduler is not None:
            self.scheduler.on_pod_update(old, new)

    # ───────────────────────────── client ─────────────────────────────

    def bind(self, pod: Pod, node_name: str) -> None:
        key = pod_key(pod)
        cur = self.pods.get(key)
        if cur is None:
            raise BindError(f'pods "{pod.metadata.name}" not found')
        if cur.spec.node_name:
            raise BindError(f"pod {key} is already assigned to node \"{cur.spec.node_name}\"")
        if node_name not in self.nodes:
            raise BindError(f'node "{node_name}" not found')
        cond = PodCondition(type="PodScheduled", status="True")
        conds = [c for c in cur.status.conditions if c.type != "PodScheduled"] + [cond]
        new = msgspec.structs.replace(
            cur, spec=msgspec.structs.replace(cur.spec, node_name=node_name),
            status=msgspec.structs.replace(cur.status, conditions=conds))
        raw = self.raw.get(("Pod", cur.metadata.namespace or "", cur.metadata.name))
        if raw is not None:
            raw.setdefault("spec", {})["nodeName"] = node_name
            _set_condition(raw, {"type": "PodScheduled", "status": "True"})
        self.bind_count += 1
        self._replace_pod(cur, new)

    def update_pod_condition(self, pod: Pod, status: str, reason: str, message: str,
                             nominated_node_name: str | None = None) -> None:
        key = pod_key(pod)
        cur = self.pods.get(key)
        if cur is None:
            return
        cond = PodCondition(type="PodScheduled", status=status, reason=reason, message=message)
        conds = [c for c in cur.status.conditions if c.type != "PodScheduled"] + [cond]
        st = msgspec.structs.replace(cur.status, conditions=conds)
        if nominated_node_name is not None:
            st = msgspec.structs.replace(st, nominated_node_name=nominated_node_name)
        new = msgspec.structs.replace(cur, status=st)
        raw = self.raw.get(("Pod", cur.metadata.namespace or "", cur.metadata.name))
        if raw is not None:
            _set_condition(raw, {"type": "PodScheduled", "status": status, "reason": reason, "message": message})
            if nominated_node_name is not None:
                raw.setdefault("status", {})["nominatedNodeName"] = nominated_node_name
        self._replace_pod(cur, new)

    def record_event(self, obj: Any, event_type: str, reason: str, action: str, message: str) -> None:
        self.event_counts[reason] += 1
        if self.keep_events:
            meta = obj.metadata
            self.events.append((event_type, reason, f"{meta.namespace}/{meta.name}", message))

    def delete_pod(self, pod: Pod) -> None:
        key = pod_key(pod)
        self.remove_pod(key)
        self.raw.pop(("Pod", pod.metadata.namespace or "", pod.metadata.name), None)


def _set_condition(raw: dict[str, Any], cond: dict[str, str]) -> None:
    status = raw.get("status")
    if not isinstance(status, dict):
        status = raw["status"] = {}
    conds = [c for c in status.get("conditions") or [] if not (isinstance(c, dict) and c.get("type") == "PodScheduled")]
    conds.append(cond)
    status["conditions"] = conds
