"""A small in-memory PodGroupManager for the workload-aware plugin tests (the real one lives in
``kubesched.cache``). Builds the hierarchy the way upstream's plugin tests do: each scheduled pod
names its path to the root group (``path_to_root`` = [leaf PodGroup, parent CompositePodGroup, …])."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod, pod_key
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KEY_TYPE, POD_GROUP_KEY_TYPE, PodGroupInfo, entity_key
from kubesched.testing.wrappers import MakePod


@dataclass
class FakePodGroupState:
    assigned: list[Pod] = field(default_factory=list)
    assumed: list[Pod] = field(default_factory=list)
    unscheduled: list[Pod] = field(default_factory=list)

    def all_pods(self) -> set[str]:
        return {p.metadata.uid for p in self.assigned + self.assumed + self.unscheduled}

    def all_pods_count(self) -> int:
        return len(self.all_pods())

    def unscheduled_pods(self) -> dict[str, Pod]:
        return {pod_key(p): p for p in self.unscheduled}

    def assumed_pods(self) -> set[str]:
        return {p.metadata.uid for p in self.assumed}

    def assigned_pods(self) -> set[str]:
        return {p.metadata.uid for p in self.assigned}

    def scheduled_pods(self) -> list[Pod]:
        return self.assigned + self.assumed

    def scheduled_pods_count(self) -> int:
        return len(self.assigned) + len(self.assumed)


@dataclass
class FakeCompositeState:
    child_keys: list[str] = field(default_factory=list)

    def children(self) -> list[str]:
        return list(self.child_keys)


class FakePodGroupManager:
    """``pod_group_state`` / ``composite_pod_group_state`` over dicts keyed ``(namespace, name)``."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, str], FakePodGroupState] = {}
        self.composites: dict[tuple[str, str], FakeCompositeState] = {}
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}

    def pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.get((namespace, name))

    def pod_group_state(self, namespace: str, name: str) -> FakePodGroupState | None:
        return self.states.get((namespace, name))

    def composite_pod_group_state(self, namespace: str, name: str) -> FakeCompositeState | None:
        return self.composites.get((namespace, name))

    def add_scheduled(self, root: PodGroupInfo, path_to_root: list[str], pod: Pod, assumed: bool = False) -> None:
        """Register ``pod`` as scheduled in the leaf of ``path_to_root`` (empty: the root itself),
        creating the intermediate composite groups below ``root``."""
        ns = root.namespace
        parent_type, parent = root.type, root.name
        chain = list(reversed(path_to_root))  # from the root's child down to the leaf
        for j, name in enumerate(chain):
            leaf = j == len(chain) - 1
            key_type = POD_GROUP_KEY_TYPE if leaf else COMPOSITE_POD_GROUP_KEY_TYPE
            assert parent_type == COMPOSITE_POD_GROUP_KEY_TYPE
            comp = self.composites.setdefault((ns, parent), FakeCompositeState())
            child = entity_key(key_type, ns, name)
            if child not in comp.child_keys:
                comp.child_keys.append(child)
            if not leaf:
                self.composites.setdefault((ns, name), FakeCompositeState())
            parent_type, parent = key_type, name
        state = self.states.setdefault((ns, parent), FakePodGroupState())
        (state.assumed if assumed else state.assigned).append(pod)

    def ensure_root(self, root: PodGroupInfo) -> None:
        if root.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            self.composites.setdefault((root.namespace, root.name), FakeCompositeState())
        else:
            self.states.setdefault((root.namespace, root.name), FakePodGroupState())


def pod_group(name: str = "root", namespace: str = "default", topology_key: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if topology_key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def composite_pod_group(name: str = "root", namespace: str = "default",
                        topology_key: str | None = None) -> dict[str, Any]:
    obj = pod_group(name, namespace, topology_key)
    obj["apiVersion"], obj["kind"] = "scheduling.k8s.io/v1alpha3", "CompositePodGroup"
    return obj


def pg_info(topology_key: str | None = None, composite: bool = False, name: str = "root") -> PodGroupInfo:
    if composite:
        return PodGroupInfo(name=name, namespace="default", type=COMPOSITE_POD_GROUP_KEY_TYPE,
                            composite_pod_group=composite_pod_group(name, topology_key=topology_key))
    return PodGroupInfo(name=name, namespace="default", type=POD_GROUP_KEY_TYPE,
                        pod_group=pod_group(name, topology_key=topology_key))


def member(name: str, node: str | None = None, group: str = "root") -> Pod:
    mp = MakePod().name(name).namespace("default").uid(name).spec(schedulingGroup={"podGroupName": group})
    if node:
        mp.node(node)
    return mp.obj()
