"""NodeDeclaredFeatures (upstream ``pkg/scheduler/framework/plugins/nodedeclaredfeatures``, v1.37.2;
new in 1.35, gate NodeDeclaredFeatures: alpha off 1.35, beta on 1.36, GA 1.37).

PreFilter (nodedeclaredfeatures.go L89-108) infers the features the pod needs from the node
(``k8s.io/component-helpers/nodedeclaredfeatures`` ``Framework.InferForPodScheduling``, target
version = the scheduler's version, here the emulated one) and returns **Skip** when there are
none. Of the registered features only three ever infer a scheduling requirement:

* ``RestartAllContainersOnContainerExits`` (since 1.35): a container or init container has a
  ``restartPolicyRules`` entry with ``action: RestartAllContainers``;
* ``UserNamespacesHostNetworkSupport`` (since 1.36): ``hostNetwork: true`` with ``hostUsers: false``;
* ``VolumeBindMountOptions`` (since 1.37): a container, init or ephemeral container volume mount
  with ``bindMountOptions``.

None of the features has a ``MaxVersion`` in 1.35–1.37, so the target version only selects the
release's registry.

Filter (L115-137): the requirement must be a subset of the node's ``status.declaredFeatures`` as
the scheduler's NodeInfo maps them (``Framework.TryMap``: a merge walk of the node's list, which
the API keeps sorted and unique, against the sorted registry; unknown names are dropped), else
UnschedulableAndUnresolvable ``"node(s) didn't match Pod's required features"``. In 1.35 the
node's list was a plain set and the reason named the missing features:
``"node declared features check failed - unsatisfied requirements: <names>"``. The batch shape
(``filter_nodes``) judges the requirement once per distinct declared list of the node table
(``NodeTable.declared_feature_set``) and gathers the verdicts over the rows.

Events (L155-170): Node Add|UpdateNodeDeclaredFeature (queue unless the declared list is
unchanged), the pod's own Update (queue when its inferred requirement changed).
With the gate off the plugin does nothing (PreFilter Skip, no events), as upstream's ``New``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, ReasonEntry, Status, as_status, reason_entry
from kubesched.framework.npfast import count_nonzero
from kubesched.framework.signers import FEATURES_SIGNER_NAME
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import deferred_resize_enabled, is_pod_resize_deferred

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod, PodSpec
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ERR_REASON_UNSATISFIED_REQUIREMENTS",
    "NAME",
    "NodeDeclaredFeatures",
    "Feature",
    "FeatureFramework",
    "default_framework",
    "infer_for_pod_scheduling",
    "new",
]

NAME = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
_ERR_REASON_135 = "node declared features check failed - unsatisfied requirements: "

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"


def _restart_all_containers(spec: PodSpec) -> bool:
    """restartallcontainers.InferForScheduling (component-helpers v0.37.2 restart_all_containers.go L51-67)."""
    return any(rule.action == "RestartAllContainers"
               for c in (*spec.containers, *spec.init_containers) for rule in c.restart_policy_rules)


def _user_namespaces_host_network(spec: PodSpec) -> bool:
    """usernamespaceshostnetwork.InferForScheduling (user_namespaces_host_network.go L62-68)."""
    return spec.host_network and spec.host_users is not None and not spec.host_users


def _volume_bind_mount_options(spec: PodSpec) -> bool:
    """volumebindmountoptions.InferForScheduling (feature.go L46-67)."""
    return any(m.bind_mount_options
               for c in (*spec.containers, *spec.init_containers, *spec.ephemeral_containers)
               for m in c.volume_mounts)


def _never(spec: PodSpec) -> bool:
    return False


@dataclass(frozen=True)
class Feature:
    """One registered node feature (component-helpers ``types.Feature``): its name, its
    ``InferForScheduling`` and its ``MaxVersion`` (None: no limit; ``(major, minor, patch)``)."""

    name: str
    infer_for_scheduling: Callable[[PodSpec], bool] = _never
    max_version: tuple[int, int, int] | None = None


class FeatureFramework:
    """Upstream ``nodedeclaredfeatures.Framework`` (framework.go L31-87, featureset.go L60-90):
    the registry sorted by name, pod inference and the node-side mapping."""

    def __init__(self, features: Sequence[Feature], mapping: str = "sorted") -> None:
        self.registry = sorted(features, key=lambda f: f.name)
        self.names = [f.name for f in self.registry]
        self.mapping = mapping  # "sorted" (TryMap, 1.36+) or "set" (1.35's sets.Set)
        self._inferring: dict[tuple[int, int, int], tuple[tuple[tuple[Callable[[PodSpec], bool], tuple[str, ...]], ...],
                                                          dict[tuple[bool, ...], frozenset[str]]]] = {}
        """target version → the features that can be required there (MaxVersion not older, an
        inference other than :func:`_never`) grouped by their ``InferForScheduling`` function (in
        registry order of first use), and the required set per tuple of the functions' outcomes."""

    def infer_for_pod_scheduling(self, spec: PodSpec, target: tuple[int, int, int] | None) -> frozenset[str]:
        """``InferForPodScheduling``: the features ``spec`` needs at scheduler version ``target``
        (a feature whose MaxVersion is older than ``target`` is not required). Raises
        ``ValueError("target version cannot be nil")`` for ``target=None``, as upstream.

        Each distinct inference function is called once (features sharing one, as mock
        registries do, are required together) and equal outcomes give the same frozenset object."""
        if target is None:
            raise ValueError("target version cannot be nil")
        active = self._inferring.get(target)
        if active is None:
            groups: dict[Callable[[PodSpec], bool], list[str]] = {}
            for f in self.registry:
                if (f.max_version is None or target <= f.max_version) and f.infer_for_scheduling is not _never:
                    groups.setdefault(f.infer_for_scheduling, []).append(f.name)
            active = self._inferring[target] = (tuple((fn, tuple(names)) for fn, names in groups.items()), {})
        fns, memo = active
        outcome = tuple(fn(spec) for fn, _ in fns)
        reqs = memo.get(outcome)
        if reqs is None:
            if len(memo) >= 4096:
                memo.clear()
            reqs = memo[outcome] = frozenset(
                name for (_, names), hit in zip(fns, outcome, strict=True) if hit for name in names)
        return reqs

    def try_map(self, declared: Sequence[str]) -> frozenset[str]:
        """The node's declared features as the scheduler's NodeInfo holds them.

        ``"sorted"``: ``FeatureMapper.TryMap`` — a merge walk of ``declared`` (assumed sorted, as
        the API validates) against the sorted registry; unknown names are skipped and an unsorted
        list loses what the walk steps over, exactly as upstream. ``"set"`` (1.35): every name."""
        if self.mapping == "set":
            return frozenset(declared)
        names = self.names
        out: set[str] = set()
        i = j = 0
        while i < len(declared) and j < len(names):
            if declared[i] == names[j]:
                out.add(names[j])
                i += 1
                j += 1
            elif declared[i] < names[j]:
                i += 1
            else:
                j += 1
        return frozenset(out)


# The registry of each release (component-helpers ``features.AllFeatures``); none has a MaxVersion.
_RESTART = Feature(RESTART_ALL_CONTAINERS, _restart_all_containers)
_USERNS = Feature(USER_NAMESPACES_HOST_NETWORK, _user_namespaces_host_network)
_BIND = Feature(VOLUME_BIND_MOUNT_OPTIONS, _volume_bind_mount_options)
_REGISTRY_135 = (_RESTART, Feature("GuaranteedQoSPodCPUResize"), Feature("InPlacePodLevelResourcesVerticalScaling"))
_REGISTRY_136 = (_RESTART, Feature("InPlacePodLevelResourcesVerticalScaling"), Feature("ExtendWebSocketsToKubelet"),
                 Feature("InPlacePodVerticalScalingInitContainers"), _USERNS)
_REGISTRY_137 = (_RESTART, Feature("InPlacePodLevelResourcesVerticalScaling"), Feature("ExtendWebSocketsToKubelet"),
                 Feature("InPlacePodVerticalScalingInitContainers"),
                 Feature("InPlacePodVerticalScalingMemoryBackedVolumes"), _USERNS,
                 Feature("DRANodeAllocatableResources"), _BIND, Feature("DRAOptionalNodeOperations"))


def default_framework(version: tuple[int, int]) -> FeatureFramework:
    """``ndf.DefaultFramework`` of the release ``version`` (component-helpers v0.35.4 / v0.36.3 /
    v0.37.2 ``features.AllFeatures``; 1.35 kept the node's list as a plain set)."""
    if version >= (1, 37):
        return FeatureFramework(_REGISTRY_137)
    if version >= (1, 36):
        return FeatureFramework(_REGISTRY_136)
    return FeatureFramework(_REGISTRY_135, mapping="set")


def infer_for_pod_scheduling(spec: PodSpec, version: tuple[int, int]) -> frozenset[str]:
    """The features a pod with ``spec`` needs from its node at scheduler version ``version``."""
    return default_framework(version).infer_for_pod_scheduling(spec, (*version, 0))


# per table (table.derived): {(framework, 1.35 reason, required features) → (verdict per
# declared-feature set id, rejection entries)}; see NodeDeclaredFeatures._verdicts.
_VERDICTS_KEY = (__name__, "verdicts")
_MAX_VERDICTS = 4096


def _new_verdicts_cache(table: NodeTable) -> dict[Any, Any]:
    return {}


class PreFilterState:
    """The pod's required features (immutable: ``clone`` returns self, as upstream)."""

    __slots__ = ("reqs",)

    def __init__(self, reqs: frozenset[str]) -> None:
        self.reqs = reqs

    def clone(self) -> PreFilterState:
        return self


class NodeDeclaredFeatures:
    """PreFilter + Filter (both shapes). See the module docstring."""

    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]] | None, Status | None]:
        """Batching signature (v1.37.2 nodedeclaredfeatures.go ``SignPod``): the features the
        pod requires (``InferForPodScheduling``) as the bitmap's ``String()`` — one ``0``/``1``
        per registered feature in sorted order (component-helpers bitmap.go L113-124); 1.35:
        the sorted list of names."""
        try:
            reqs = self.framework.infer_for_pod_scheduling(pod.spec, self.version)
        except ValueError as e:
            return None, as_status(e)
        if self.framework.mapping == "set":
            return [(FEATURES_SIGNER_NAME, sorted(reqs))], None
        return [(FEATURES_SIGNER_NAME, "".join("1" if n in reqs else "0" for n in self.framework.names))], None

    def __init__(self, features: FeatureGate | None = None, framework: FeatureFramework | None = None,
                 version: tuple[int, int, int] | None = None) -> None:
        fg = features if features is not None else default_feature_gate()
        self.enabled = fg.enabled("NodeDeclaredFeatures")
        self.framework = framework if framework is not None else default_framework(fg.emulated_version)
        self.version = version if version is not None else (*fg.emulated_version, 0)
        self.old_reason = not fg.at_least(1, 36)  # 1.35: the reason names the missing features
        self.target_pod_events = fg.at_least(1, 37)  # 1.37: the pod's own update is a TargetPod event
        self.enable_deferred_resize = deferred_resize_enabled(fg)
        self._memo: dict[tuple[str, ...], frozenset[str]] = {}
        self._by_list: dict[int, tuple[list[str], frozenset[str]]] = {}

    def _node_features(self, node: Node) -> frozenset[str]:
        """The node's declared features as the framework maps them, memoised by content; and by the
        identity of the node's ``declaredFeatures`` list first (API objects are replaced, never
        changed in place), which spares hashing a 20–100-name tuple per node per pod."""
        lst = node.status.declared_features
        hit = self._by_list.get(id(lst))
        if hit is not None and hit[0] is lst:
            return hit[1]
        key = tuple(lst)
        fs = self._memo.get(key)
        if fs is None:
            if len(self._memo) > 4096:
                self._memo.clear()
            fs = self._memo[key] = self.framework.try_map(key)
        if len(self._by_list) > 65536:
            self._by_list.clear()
        self._by_list[id(lst)] = (lst, fs)  # holds the list: its id stays its own
        return fs

    def _reject(self, reqs: frozenset[str], have: frozenset[str]) -> Status | None:
        if reqs <= have:
            return None
        if self.old_reason:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                             _ERR_REASON_135 + ", ".join(sorted(reqs - have)))
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)

    # ─── PreFilter ───
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.enable_deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        if not self.enabled:
            return None, SKIP_STATUS
        try:
            reqs = self.framework.infer_for_pod_scheduling(pod.spec, self.version)
        except ValueError as e:
            return None, as_status(e)
        if not reqs:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(reqs))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # ─── Filter ───
    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state (the scheduler's equivalence
        cache, :mod:`kubesched.framework.equivalence`, may reuse its passes)."""
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if (self.enable_deferred_resize and is_pod_resize_deferred(pod)) or not self.enabled:
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        return self._reject(s.reqs, self._node_features(node_info.node))

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable,
                     rows: np.ndarray) -> FilterResult | None:
        """By the table's ``declared_feature_set`` column: the pod's requirement is judged once per
        distinct declared list (:meth:`_verdicts`), then one gather over ``rows``. The result
        equals ``FilterResult.from_statuses`` of :meth:`filter` per row. Only pods with a
        requirement get here (PreFilter Skips the rest)."""
        if (self.enable_deferred_resize and is_pod_resize_deferred(pod)) or not self.enabled:
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        ids, entries = self._verdicts(nodes, s.reqs)
        if not entries:
            return None
        failed = ids[nodes.declared_feature_set[rows]]
        if not count_nonzero(failed):
            return None
        if len(entries) == 1:
            return FilterResult.interned(failed, entries)
        # several reasons (1.35 names the missing features): number them in row order, as from_statuses
        values, first = np.unique(failed, return_index=True)
        used = [int(v) for v in values[np.argsort(first)] if v]
        renumber = np.zeros(len(entries) + 1, np.int64)
        renumber[used] = np.arange(1, len(used) + 1)
        return FilterResult.interned(renumber[failed], [entries[v - 1] for v in used])

    def _verdicts(self, table: NodeTable, reqs: frozenset[str]) -> tuple[np.ndarray, list[ReasonEntry]]:
        """Per declared-feature set id of ``table``: 0 when a node declaring it has every feature
        of ``reqs``, else ``k`` = its rejection ``entries[k - 1]`` (:meth:`_reject`). Cached per
        table (ids are append-only, so an entry is only ever extended, never stale)."""
        cache: dict[tuple[FeatureFramework, bool, frozenset[str]], tuple[np.ndarray, list[ReasonEntry]]] = \
            table.derived(_VERDICTS_KEY, _new_verdicts_cache)
        key = (self.framework, self.old_reason, reqs)
        hit = cache.get(key)
        sets = table.declared_feature_sets
        if hit is not None and len(hit[0]) == len(sets):
            return hit
        ids = np.zeros(len(sets), np.int64)
        entries: list[ReasonEntry] = []
        start = 0
        if hit is not None:
            start = len(hit[0])
            ids[:start] = hit[0]
            entries = list(hit[1])
        index = {e: k for k, e in enumerate(entries, 1)}
        for fid in range(start, len(sets)):
            st = self._reject(reqs, self.framework.try_map(sets[fid]))
            if st is not None:
                entry = reason_entry(st)
                k = index.get(entry)
                if k is None:
                    entries.append(entry)
                    k = index[entry] = len(entries)
                ids[fid] = k
        if len(cache) >= _MAX_VERDICTS:
            cache.clear()
        cache[key] = (ids, entries)
        return ids, entries

    # ─── queueing hints ───
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                self.is_schedulable_after_node_change),
            # 1.37 (nodedeclaredfeatures.go EventsToRegister): TargetPod/Update; 1.35/1.36: Pod/Update
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD if self.target_pod_events
                                              else EventResource.POD, ActionType.UPDATE),
                                 self.is_schedulable_after_pod_update),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue unless the node's declared list is unchanged (L197-208)."""
        if old is not None and list(old.status.declared_features) == list(new.status.declared_features):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_update(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """The pod's own update (1.37: a ``TargetPod`` registration; before, ``Pod`` and a UID check):
        queue when its inferred requirement changed (L172-195)."""
        if (pod.metadata.uid or (pod.metadata.namespace, pod.metadata.name)) != \
                (new.metadata.uid or (new.metadata.namespace, new.metadata.name)):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        try:
            same = (self.framework.infer_for_pod_scheduling(old.spec, self.version)
                    == self.framework.infer_for_pod_scheduling(new.spec, self.version))
        except ValueError:
            return QueueingHint.QUEUE  # upstream: Queue with the error
        if same:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: Any, handle: Any) -> NodeDeclaredFeatures:
    """Factory (upstream ``nodedeclaredfeatures.New``); the plugin takes no args."""
    return NodeDeclaredFeatures(features_of(handle))
