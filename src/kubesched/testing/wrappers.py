"""Fluent builders for test objects, in the spirit of upstream ``pkg/scheduler/testing/wrappers.go``.

    pod = MakePod().name("p").namespace("ns").req(cpu="1", memory="2Gi").node("n1").obj()
    node = MakeNode().name("n1").capacity(cpu="4", memory="32Gi", pods="110").label("zone", "a").obj()

Also :func:`build_table`, a NodeTable with nodes and their pods, for plugin tests.
Quantities are given as Kubernetes strings ("100m", "2Gi").
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api import objects as o
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable

__all__ = ["MakeNode", "MakePod", "build_table"]


def _r(**q: Any) -> dict[str, Any]:
    return {k.replace("_", "-") if k in ("ephemeral_storage",) else k: v for k, v in q.items()}


class MakePod:
    """Builds a :class:`~kubesched.api.objects.Pod`; each call returns ``self``."""

    def __init__(self) -> None:
        self._meta: dict[str, Any] = {"name": "pod", "namespace": "default", "labels": {}, "annotations": {}}
        self._spec: dict[str, Any] = {"containers": [], "initContainers": []}
        self._status: dict[str, Any] = {}

    def name(self, name: str) -> MakePod:
        self._meta["name"] = name
        return self

    def namespace(self, ns: str) -> MakePod:
        self._meta["namespace"] = ns
        return self

    def uid(self, uid: str) -> MakePod:
        self._meta["uid"] = uid
        return self

    def label(self, k: str, v: str) -> MakePod:
        self._meta["labels"][k] = v
        return self

    def labels(self, d: dict[str, str]) -> MakePod:
        self._meta["labels"].update(d)
        return self

    def annotation(self, k: str, v: str) -> MakePod:
        self._meta["annotations"][k] = v
        return self

    def creation_timestamp(self, ts: str) -> MakePod:
        self._meta["creationTimestamp"] = ts
        return self

    def terminating(self, ts: str = "2024-01-01T00:00:00Z") -> MakePod:
        self._meta["deletionTimestamp"] = ts
        return self

    def node(self, node_name: str) -> MakePod:
        self._spec["nodeName"] = node_name
        return self

    def scheduler_name(self, name: str) -> MakePod:
        self._spec["schedulerName"] = name
        return self

    def priority(self, p: int) -> MakePod:
        self._spec["priority"] = p
        return self

    def preemption_policy(self, policy: str) -> MakePod:
        self._spec["preemptionPolicy"] = policy
        return self

    def nominated_node_name(self, n: str) -> MakePod:
        self._status["nominatedNodeName"] = n
        return self

    def start_time(self, ts: str) -> MakePod:
        self._status["startTime"] = ts
        return self

    def container(self, image: str = "registry.k8s.io/pause:3.9", *, requests: dict[str, Any] | None = None,
                  limits: dict[str, Any] | None = None, ports: list[dict[str, Any]] | None = None,
                  name: str | None = None, init: bool = False, restart_policy: str | None = None) -> MakePod:
        key = "initContainers" if init else "containers"
        c: dict[str, Any] = {"name": name or f"c{len(self._spec[key])}", "image": image,
                             "resources": {"requests": dict(requests or {}), "limits": dict(limits or {})}}
        if ports:
            c["ports"] = ports
        if restart_policy:
            c["restartPolicy"] = restart_policy
        self._spec[key].append(c)
        return self

    def req(self, **quantities: Any) -> MakePod:
        """Add one container requesting ``quantities`` (``cpu="1"``, ``memory="1Gi"``; for names
        with dots or slashes pass ``**{"nvidia.com/gpu": "1"}``)."""
        return self.container(requests=_r(**quantities))

    def init_req(self, sidecar: bool = False, **quantities: Any) -> MakePod:
        return self.container(requests=_r(**quantities), init=True, restart_policy="Always" if sidecar else None)

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> MakePod:
        p = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def overhead(self, **quantities: Any) -> MakePod:
        self._spec["overhead"] = _r(**quantities)
        return self

    def node_selector(self, d: dict[str, str]) -> MakePod:
        self._spec["nodeSelector"] = dict(d)
        return self

    def toleration(self, key: str = "", operator: str = "", value: str = "", effect: str = "") -> MakePod:
        self._spec.setdefault("tolerations", []).append(
            {k: v for k, v in {"key": key, "operator": operator, "value": value, "effect": effect}.items() if v})
        return self

    def _affinity(self) -> dict[str, Any]:
        return self._spec.setdefault("affinity", {})

    def node_affinity_in(self, key: str, values: list[str], op: str = "In") -> MakePod:
        """Add a required node-affinity term with one expression (terms are ORed)."""
        na = self._affinity().setdefault("nodeAffinity", {})
        req = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
        req["nodeSelectorTerms"].append({"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]})
        return self

    def node_affinity_terms(self, terms: list[dict[str, Any]]) -> MakePod:
        na = self._affinity().setdefault("nodeAffinity", {})
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        return self

    def preferred_node_affinity(self, weight: int, term: dict[str, Any]) -> MakePod:
        na = self._affinity().setdefault("nodeAffinity", {})
        na.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": term})
        return self

    def pod_affinity(self, kind: str, term: dict[str, Any], weight: int | None = None) -> MakePod:
        """``kind`` is "podAffinity" or "podAntiAffinity"; ``weight`` makes it a preferred term."""
        pa = self._affinity().setdefault(kind, {})
        if weight is None:
            pa.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            pa.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    def spread_constraint(self, max_skew: int, topology_key: str, when: str,
                          selector: dict[str, Any] | None, **extra: Any) -> MakePod:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = selector
        c.update(extra)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def scheduling_gates(self, *names: str) -> MakePod:
        self._spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def pvc(self, claim_name: str, volume_name: str | None = None) -> MakePod:
        self._spec.setdefault("volumes", []).append(
            {"name": volume_name or claim_name, "persistentVolumeClaim": {"claimName": claim_name}})
        return self

    def condition(self, type_: str, status: str, reason: str = "") -> MakePod:
        """Append a status condition (upstream wrapper ``Condition``)."""
        self._status.setdefault("conditions", []).append({"type": type_, "status": status, "reason": reason})
        return self

    def spec(self, **fields: Any) -> MakePod:
        """Set raw spec fields (camelCase JSON names)."""
        self._spec.update(fields)
        return self

    def raw(self) -> dict[str, Any]:
        spec = dict(self._spec)
        if not spec["initContainers"]:
            del spec["initContainers"]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": self._meta, "spec": spec, "status": self._status}

    def obj(self) -> o.Pod:
        return o.decode(o.Pod, msgspec.json.decode(msgspec.json.encode(self.raw())))


class MakeNode:
    """Builds a :class:`~kubesched.api.objects.Node`; each call returns ``self``."""

    def __init__(self) -> None:
        self._meta: dict[str, Any] = {"name": "node", "labels": {}}
        self._spec: dict[str, Any] = {}
        self._status: dict[str, Any] = {"capacity": {}, "allocatable": {}}

    def name(self, name: str) -> MakeNode:
        self._meta["name"] = name
        self._meta["labels"].setdefault("kubernetes.io/hostname", name)
        return self

    def label(self, k: str, v: str) -> MakeNode:
        self._meta["labels"][k] = v
        return self

    def labels(self, d: dict[str, str]) -> MakeNode:
        self._meta["labels"].update(d)
        return self

    def capacity(self, **quantities: Any) -> MakeNode:
        """Capacity and allocatable (the same, as upstream's test nodes)."""
        q = _r(**quantities)
        self._status["capacity"].update(q)
        self._status["allocatable"].update(q)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> MakeNode:
        self._spec.setdefault("taints", []).append({"key": key, "value": value, "effect": effect})
        return self

    def unschedulable(self, flag: bool = True) -> MakeNode:
        self._spec["unschedulable"] = flag
        return self

    def declared_features(self, features: list[str]) -> MakeNode:
        """``status.declaredFeatures`` (upstream wrapper ``DeclaredFeatures``)."""
        self._status["declaredFeatures"] = list(features)
        return self

    def image(self, size_bytes: int, *names: str) -> MakeNode:
        self._status.setdefault("images", []).append({"names": list(names), "sizeBytes": size_bytes})
        return self

    def raw(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Node", "metadata": self._meta, "spec": self._spec,
                "status": self._status}

    def obj(self) -> o.Node:
        return o.decode(o.Node, msgspec.json.decode(msgspec.json.encode(self.raw())))


def build_table(nodes: list[o.Node], pods: list[o.Pod] = ()) -> NodeTable:  # type: ignore[assignment]
    """A NodeTable holding ``nodes`` and the ``pods`` bound to them (``spec.nodeName``)."""
    table = NodeTable()
    for n in nodes:
        table.set_node(n)
    for p in pods:
        table.add_pod(PodInfo(p), table.row_of[p.spec.node_name])
    return table
