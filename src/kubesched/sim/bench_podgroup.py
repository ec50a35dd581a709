"""scheduler_perf's v1.37 workload-aware test cases for ``kubesched bench``: ``podgroup/basicscheduling``,
``podgroup/gangscheduling``, ``podgroup/tas``, ``workload_preemption``, ``starvation`` and ``batching``
(upstream ``test/integration/scheduler_perf/<topic>/performance-config.yaml`` of v1.37.2 and their templates).

The templates are upstream's Go text/template files, kept verbatim in :data:`TEMPLATES_137` (keyed by
their path under ``scheduler_perf/``) and rendered per object by
:func:`~kubesched.sim.bench_gotemplate.render_template` (the subset of Go's text/template upstream's
templates use; ``operations.go`` ``getSpecFromTextTemplateFile``). ``Index`` is the
object's index within its op, ``Count`` the op's count, the rest the op's ``templateParams``.

Ops (``operations.go`` / ``executor.go`` of v1.37.2), in addition to :mod:`kubesched.sim.bench_runner`'s:

* :class:`NodesOp` — ``createNodes`` with an optional ``nodeTemplatePath``; without one, upstream's
  ``makeBaseNode("node-<op index>-")`` (4 CPU, 32Gi, 110 pods). Every node gets the
  ``kubernetes.io/hostname`` label = its name (``node_util.go`` ``PrepareNodes``).
* :class:`CreatePodGroups` — ``createPodGroups``: ``count`` PodGroups from the template (``Index``
  0…count-1) in ``namespace``, stored as the API serves them (raw ``scheduling.k8s.io/v1beta1``
  mappings, ``store.put_object("PodGroup", …)``); the informer events are delivered before the
  next op (upstream waits for the scheduler's informer to list them).
* :class:`PodsOp` — ``createPods`` with ``podTemplatePath``/``templateParams``; every pod gets the label
  ``signature: signature-label-<index // signatureBatchSize>`` (``podTemplateWithParams``;
  ``signatureBatchSizeParam``, default 1); ``skipWaitToCompletion`` records the pods for a later
  barrier instead of waiting; otherwise the op waits until the namespace has ``count`` scheduled
  pods (``waitUntilPodsScheduledInNamespace`` counts *every* scheduled pod of the namespace);
  ``collectMetrics`` measures it (see :mod:`kubesched.sim.bench_runner`). ``collect_namespaces`` is a
  ``startCollectingMetrics``/``stopCollectingMetrics`` pair around the op: the throughput counts
  every pod of those namespaces that gets scheduled (upstream ``throughputCollector``).
* :class:`Churn` — ``churn`` in ``recreate`` mode: every ``interval_ms`` of wall time slot
  ``k % number`` alternately creates a pod from the template and deletes it.
* :class:`Barrier` — ``barrier``; ``stageRequirement: Attempted`` waits until every pod the
  namespaces recorded (skip-wait pods) is scheduled or carries a ``PodScheduled`` condition
  (``waitUntilPodsAttempted``, ``isAttempted``).

Feature gates: each workload runs with its test case's and workload's ``featureGates`` over the
gates passed in (gates given explicitly, e.g. ``--feature-gates``, win). ``batching`` runs with its
``scheduler-config-no-topology.yaml`` (PodTopologySpread without default constraints).

Time: a workload with a ``churn`` op runs on wall time — the scheduler's clock follows the wall
clock (backoffs expire, ``flushUnschedulablePodsLeftover`` runs every 30 s) and the loop idles
until the next churn tick or backoff expiry when nothing is schedulable; every other workload runs
as :mod:`kubesched.sim.bench_runner` does (time stands still; a pod in backoff is popped when activeQ is
empty, as ``SchedulerPopFromBackoffQ``), except that when nothing is schedulable the clock jumps to
the next backoff expiry or Permit timeout (a preempting pod group waits out its backoff).

The GenericWorkload workloads need the pod-group engine (GangScheduling, the pod-group cycle); a
build without it fails to start their scheduler (``plugin "GangScheduling" does not exist``).
"""

from __future__ import annotations

import dataclasses
import functools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import yaml

from kubesched.api.objects import Namespace, Node, ObjectMeta, Pod, Service, decode, pod_key
from kubesched.config import decode_config, default_config
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.scheduler import Attempt, Scheduler
from kubesched.sim.bench_gotemplate import render_template
from kubesched.sim.bench_runner import (
    IT_LABELS,
    PERF_LABELS,
    BenchResult,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    Names,
    Progress,
    ThroughputCollector,
    Workload,
    begin_measured,
    csi_node_for,
    end_measured,
    finish,
    upstream_threshold,
)
from kubesched.sim.store import ClusterStore

__all__ = [
    "TEMPLATES_137",
    "V137_WORKLOADS",
    "Barrier",
    "Churn",
    "CreatePodGroups",
    "NodesOp",
    "PodsOp",
    "VirtualTimer",
    "execute_v137",
    "render_object",
    "render_template",
    "selector_matches",
    "workload_features",
]

_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

TEMPLATES_137: dict[str, str] = {
'podgroup/basicscheduling/templates/basic-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  name: test-basic-scheduling-{{.Index}}
spec:
  schedulingGroup:
    podGroupName: basic-group-{{DivideInt .Index .podsPerGroup}}
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
""",
'podgroup/basicscheduling/templates/podgroup.yaml' : r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: basic-group-{{.Index}}
spec:
  schedulingPolicy:
    basic: {}
""",
'podgroup/gangscheduling/templates/gang-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  name: test-gang-scheduling-{{.Index}}
spec:
  schedulingGroup:
    podGroupName: gang-{{DivideInt .Index .podsPerGroup}}
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
""",
'podgroup/gangscheduling/templates/podgroup.yaml' : r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: gang-{{.Index}}
spec:
  schedulingPolicy:
    gang:
      minCount: {{.podsPerGroup}}
""",
'podgroup/tas/templates/gang-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  name: test-tas-scheduling-{{.Index}}
spec:
  schedulingGroup:
    podGroupName: gang-{{DivideInt .Index .podsPerGroup}}
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
""",
'podgroup/tas/templates/node.yaml' : r"""apiVersion: v1
kind: Node
metadata:
  name: node-{{.Index}}
  labels:
    kubernetes.io/hostname: node-{{.Index}}
    topology.kubernetes.io/zone: zone-{{DivideInt .Index 100}}
    topology.kubernetes.io/rack: rack-{{DivideInt .Index 100}}
status:
  capacity:
    cpu: "4"
    memory: 32Gi
    pods: "110"
  allocatable:
    cpu: "4"
    memory: 32Gi
    pods: "110"
  phase: Running
  conditions:
  - type: Ready
    status: "True"
""",
'podgroup/tas/templates/podgroup.yaml' : r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: gang-{{.Index}}
spec:
  schedulingPolicy:
    gang:
      minCount: {{.podsPerGroup}}
  schedulingConstraints:
    topology:
    - key: topology.kubernetes.io/rack
""",
'workload_preemption/templates/gang-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-gang-{{.Index}}
spec:
  priority: {{if .priority}}{{AddInt 0 .priority}}{{else}}8888888{{end}}
  schedulingGroup:
    podGroupName: gang-{{DivideInt .Index .podsPerGroup}}
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    {{if .hostPortBase}}
    ports:
    - containerPort: 80
      # hostPort guarantees that all pods from the same PodGroup have the exact same host port.
      # Since two pods cannot share the same host port on a single node, this forces them to land on different nodes.
      hostPort: {{AddInt .hostPortBase (DivideInt .Index .podsPerGroup)}}
    {{end}}
    resources:
      limits:
        cpu: {{.cpuRequest}}
        memory: 100Mi
      requests:
        cpu: {{.cpuRequest}}
        memory: 100Mi
""",
'workload_preemption/templates/pod-anchor-high-priority.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-anchor-{{.Index}}-
  labels:
    app: blue
    label1: value1
    label2: value2
    label3: value3
    label4: value4
spec:
  priority: 9999999
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
      # hostPort is configured with a formula based on .Index and the number of pods per node
      # to guarantee that anchor pods are evenly distributed/spread across all nodes in the cluster.
      hostPort: {{AddInt 7000 (Mod .Index (DivideInt .podsCount .nodesCount))}}
    resources:
      limits:
        cpu: 10m
        memory: 100Mi
      requests:
        cpu: 10m
        memory: 100Mi
        """,
'workload_preemption/templates/pod-gang-affinity.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-gang-{{.Index}}
spec:
  priority: {{if .priority}}{{AddInt 0 .priority}}{{else}}8888888{{end}}
  schedulingGroup:
    podGroupName: gang-{{DivideInt .Index .podsPerGroup}}
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            app: blue
            # Adding more labels to increase scheduler load while calculating affinity
            label1: value1
            label2: value2
            label3: value3
            label4: value4
        topologyKey: kubernetes.io/hostname
        namespaceSelector: {}
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      limits:
        cpu: 3970m
        memory: 500Mi
      requests:
        # 3970m is chosen because nodes typically have 4000m CPU capacity.
        # Requesting 3970m ensures it can fit on a node, but only if all
        # low-priority pods (which request 40m) are preempted.
        cpu: 3970m
        memory: 500Mi
""",
'workload_preemption/templates/pod-low-priority.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-low-priority-{{.Index}}-
  labels:
    app: blue
    label1: value1
    label2: value2
    label3: value3
    label4: value4
spec:
  priority: 0
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
      # hostPort is configured with a formula based on .Index and the number of pods per node
      # to guarantee that low priority pods are evenly distributed/spread across all nodes in the cluster.
      hostPort: {{AddInt 8000 (Mod .Index (DivideInt .podsCount .nodesCount))}}
    resources:
      limits:
        cpu: 40m
        memory: 100Mi
      requests:
        cpu: 40m
        memory: 100Mi
        """,
'workload_preemption/templates/podgroup.yaml' : r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: gang-{{.Index}}
spec:
  priority: {{if .priority}}{{AddInt 0 .priority}}{{else}}8888888{{end}}
  schedulingPolicy:
    gang:
      minCount: {{.podsPerGroup}}
""",
'starvation/templates/churn-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-churn-
  labels:
    service: target
spec:
  priority: 10000
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 10m
        memory: 10Mi
""",
'starvation/templates/clogger-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-clogger-
spec:
  priority: 1000
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      # Term 1: Direct match on target label
      - labelSelector:
          matchExpressions:
          - key: service
            operator: In
            values:
            - target
        namespaces: ["starvation-0", "default", "kube-system"]
        topologyKey: kubernetes.io/hostname

      # Term 2: Match on key existence (forces more selector processing)
      - labelSelector:
          matchExpressions:
          - key: service
            operator: Exists
          - key: service
            operator: NotIn
            values:
            - non-existent-value
        namespaces: ["starvation-0", "default"]
        topologyKey: kubernetes.io/hostname

    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      # Term 1: Direct anti-affinity match
      - labelSelector:
          matchExpressions:
          - key: service
            operator: In
            values:
            - target
        namespaces: ["starvation-0", "default", "kube-system"]
        topologyKey: kubernetes.io/hostname
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
'starvation/templates/clogger-podgroup-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-clogger-podgroup-
spec:
  priority: 1000
  schedulingGroup:
    podGroupName: podgroup-0
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      # Term 1: Direct match on target label
      - labelSelector:
          matchExpressions:
          - key: service
            operator: In
            values:
            - target
        namespaces: ["starvation-0", "default", "kube-system"]
        topologyKey: kubernetes.io/hostname

      # Term 2: Match on key existence (forces more selector processing)
      - labelSelector:
          matchExpressions:
          - key: service
            operator: Exists
          - key: service
            operator: NotIn
            values:
            - non-existent-value
        namespaces: ["starvation-0", "default"]
        topologyKey: kubernetes.io/hostname

    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      # Term 1: Direct anti-affinity match
      - labelSelector:
          matchExpressions:
          - key: service
            operator: In
            values:
            - target
        namespaces: ["starvation-0", "default", "kube-system"]
        topologyKey: kubernetes.io/hostname
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
'starvation/templates/node.yaml' : r"""apiVersion: v1
kind: Node
metadata:
  generateName: starvation-node-
spec: {}
status:
  capacity:
    pods: "110"
    cpu: "4"
    memory: 8Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
'starvation/templates/podgroup.yaml' : r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: podgroup-{{.Index}}
spec:
  schedulingPolicy:
    gang:
      minCount: {{.minCount}}
""",
'starvation/templates/victim-pod.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-victim-
spec:
  priority: 0
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 10m
        memory: 10Mi
""",
'templates/pod-hostport-80.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-hostport-80-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
      hostPort: 80
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
""",
'templates/pod-saturation.yaml' : r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-saturation-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 3
        memory: 1Gi
""",
'templates/node-default.yaml' : r"""apiVersion: v1
kind: Node
metadata:
  generateName: scheduler-perf-
spec: {}
status:
  capacity:
    pods: "110"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
'batching/scheduler-config-no-topology.yaml' : r"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: []
""",
}
"""Upstream v1.37.2 templates (``test/integration/scheduler_perf/<path>``), verbatim but for trailing
whitespace."""


def render_object(path: str, env: dict[str, Any]) -> dict[str, Any]:
    """Render the template at ``path`` (a key of :data:`TEMPLATES_137`) and parse it as YAML (a fresh
    mapping per call; equal renderings are parsed once)."""
    return msgspec.json.decode(_parse_rendered(path, render_template(TEMPLATES_137[path], env)))


@functools.lru_cache(maxsize=4096)
def _parse_rendered(path: str, text: str) -> bytes:
    obj = yaml.load(text, Loader=_SafeLoader)
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: the rendered template is not an object")
    return msgspec.json.encode(obj)


# ───────────────────────────── ops ─────────────────────────────

_BASE_RESOURCES = {"cpu": "100m", "memory": "500Mi"}
"""``runners.go`` ``MakePodSpec``: the base pod's requests and limits."""

Params = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class NodesOp(CreateNodes):
    """``createNodes`` with ``nodeTemplatePath`` = ``path`` (None: ``makeBaseNode``)."""

    path: str | None = None
    params: Params = ()


@dataclass(frozen=True)
class PodsOp(CreatePods):
    """``createPods`` with ``podTemplatePath`` = ``path`` (see the module docstring)."""

    path: str = ""
    params: Params = ()
    signature_batch_size: int = 1
    skip_wait: bool = False
    collect_namespaces: tuple[str, ...] = ()
    """Measured op only: the ``startCollectingMetrics`` namespaces (default: the op's namespace)."""


@dataclass(frozen=True)
class CreatePodGroups:
    """``createPodGroups``."""

    count: int
    namespace: str
    path: str
    params: Params = ()


@dataclass(frozen=True)
class Churn:
    """``churn`` (``runChurnOp``): every ``interval_ms`` of (wall or virtual) time, in ``recreate``
    mode slot ``k % number`` of every template alternately creates an object and deletes it; in
    ``create`` mode one object of every template is created, ``number`` times (0: until the run ends).
    The templates are ``path`` and ``extra_paths`` (Pods and Services in ``namespace``, Nodes)."""

    number: int
    interval_ms: int
    namespace: str
    path: str
    mode: str = "recreate"
    extra_paths: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path, *self.extra_paths)


@dataclass(frozen=True)
class Barrier:
    """``barrier``; ``stage`` is ``stageRequirement`` (Attempted or Scheduled); ``label_selector``
    (``labelSelector``) restricts the pods counted against each namespace's skip-wait count."""

    stage: str = "Scheduled"
    namespaces: tuple[str, ...] = ()
    label_selector: Params = ()


@dataclass(frozen=True)
class _Case:
    gates: tuple[tuple[str, bool], ...] = ()
    config: str | None = None
    """Key of :data:`TEMPLATES_137` holding the test case's ``schedulerConfigPath``."""
    timeout_s: float = 600.0
    """Longest wait of one op (upstream's 10 min ``waitUntilPodsScheduledInNamespace``)."""


_CASES: dict[str, _Case] = {}


def _p(**kw: Any) -> Params:
    return tuple(kw.items())


def register_cases(case: str, gates: dict[str, bool], template: Callable[[dict[str, Any]], list[Any]],
              workloads: Sequence[tuple[Any, ...]],
              config: str | None = None, timeout_s: float = 600.0) -> dict[str, Workload]:
    out: dict[str, Workload] = {}
    for entry in workloads:
        name, params, labels = entry[0], entry[1], entry[2]
        wl_gates = {**gates, **(entry[3] if len(entry) > 3 else {})}
        w = Workload(case, name, tuple(template(params)), None, None, None, labels)
        _CASES[w.key] = _Case(tuple(sorted(wl_gates.items())), config, timeout_s)
        out[w.key] = w
    return out


_GW = {"GenericWorkload": True}


def _podgroup_case(ns: str, group_tpl: str, pod_tpl: str, node_tpl: str | None = None) -> Callable[..., list[Any]]:
    """podgroup/{basicscheduling,gangscheduling,tas}: nodes, one namespace, the groups, their pods."""
    def ops(p: dict[str, Any]) -> list[Any]:
        per = _p(podsPerGroup=p["podsPerGroup"])
        return [NodesOp(p["initNodes"], path=node_tpl), CreateNamespaces(ns, 1),
                CreatePodGroups(p["initPodGroups"], f"{ns}-0", group_tpl, per),
                PodsOp(p["initPodGroups"] * p["podsPerGroup"], namespace=f"{ns}-0", path=pod_tpl, params=per,
                       collect_metrics=True)]
    return ops


def _pg_sizes(gangs: str, sizes: Sequence[tuple[int, int]], small: str = "Gangs") -> list[Any]:
    """The eight podgroup workloads: two integration-test sizes, six 5000-node performance sizes."""
    out: list[Any] = [(f"10Nodes_3{small}", {"initNodes": 10, "initPodGroups": 3, "podsPerGroup": 3}, IT_LABELS),
                      (f"100Nodes_10{small}", {"initNodes": 100, "initPodGroups": 10, "podsPerGroup": 3},
                       ("integration-test",))]
    for groups, per in sizes:
        suffix = f"_{per}PerGroup" if per == 1000 else ""
        out.append((f"5000Nodes_{groups}{gangs}_{groups * per}Pods{suffix}",
                    {"initNodes": 5000, "initPodGroups": groups, "podsPerGroup": per}, PERF_LABELS))
    return out


_PG3 = [(1000, 3), (2000, 3), (3000, 3), (3, 1000), (6, 1000), (9, 1000)]
_PG4 = [(750, 4), (1500, 4), (2250, 4), (3, 1000), (6, 1000), (9, 1000)]

_WP = "workload_preemption/templates/"


def _gang_preemption_basic(p: dict[str, Any]) -> list[Any]:
    return [NodesOp(p["initNodes"]), CreateNamespaces("gang-preempt", 2),
            PodsOp(p["initPods"], namespace="gang-preempt-1", path=_WP + "pod-low-priority.yaml",
                   params=_p(nodesCount=p["initNodes"], podsCount=p["initPods"])),
            CreatePodGroups(p["preemptorPodGroups"], "gang-preempt-0", _WP + "podgroup.yaml",
                            _p(podsPerGroup=p["podsPerGroup"])),
            PodsOp(p["preemptorPodGroups"] * p["podsPerGroup"], namespace="gang-preempt-0", path=_WP + "gang-pod.yaml",
                   params=_p(podsPerGroup=p["podsPerGroup"], cpuRequest=p["gangCpuRequest"]), collect_metrics=True)]


def _gang_preemption_podgroups(p: dict[str, Any]) -> list[Any]:
    per = p["podsPerGroup"]
    low, high = p["lowPriorityGroups"], p["highPriorityGroups"]
    return [NodesOp(p["initNodes"]), CreateNamespaces("gang-preempt", 2),
            CreatePodGroups(low, "gang-preempt-1", _WP + "podgroup.yaml", _p(podsPerGroup=per, priority=1000)),
            PodsOp(low * per, namespace="gang-preempt-1", path=_WP + "gang-pod.yaml",
                   params=_p(podsPerGroup=per, cpuRequest=p["lowPriorityCpuRequest"], hostPortBase=8000,
                             priority=1000)),
            CreatePodGroups(high, "gang-preempt-0", _WP + "podgroup.yaml", _p(podsPerGroup=per, priority=9999999)),
            PodsOp(high * per, namespace="gang-preempt-0", path=_WP + "gang-pod.yaml",
                   params=_p(podsPerGroup=per, cpuRequest=p["highPriorityCpuRequest"], hostPortBase=9000,
                             priority=9999999), collect_metrics=True)]


def _gang_preemption_affinity(p: dict[str, Any]) -> list[Any]:
    n = p["initNodes"]
    return [NodesOp(n), CreateNamespaces("gang-preempt", 3),
            PodsOp(n, namespace="gang-preempt-2", path=_WP + "pod-anchor-high-priority.yaml",
                   params=_p(nodesCount=n, podsCount=n)),
            PodsOp(p["initPods"], namespace="gang-preempt-1", path=_WP + "pod-low-priority.yaml",
                   params=_p(nodesCount=n, podsCount=p["initPods"])),
            CreatePodGroups(p["preemptorPodGroups"], "gang-preempt-0", _WP + "podgroup.yaml",
                            _p(podsPerGroup=p["podsPerGroup"])),
            PodsOp(p["preemptorPodGroups"] * p["podsPerGroup"], namespace="gang-preempt-0",
                   path=_WP + "pod-gang-affinity.yaml", params=_p(podsPerGroup=p["podsPerGroup"]),
                   collect_metrics=True)]


def _batching(pod_tpl: str) -> Callable[[dict[str, Any]], list[Any]]:
    def ops(p: dict[str, Any]) -> list[Any]:
        return [NodesOp(p["initNodes"], path="templates/node-default.yaml"),
                PodsOp(p["measurePods"], path=pod_tpl, signature_batch_size=p["signatureBatchSize"],
                       collect_metrics=True)]
    return ops


def _batching_sizes() -> list[Any]:
    on, off = {"OpportunisticBatching": True}, {"OpportunisticBatching": False}
    out: list[Any] = [("10Nodes_10Pods_10BatchSize",
                       {"signatureBatchSize": 10, "initNodes": 10, "measurePods": 10}, IT_LABELS, on)]
    for b in (10, 100, 1000, 5000, 20000):
        out.append((f"20000Nodes_20000Pods_{b}BatchSize",
                    {"signatureBatchSize": b, "initNodes": 20000, "measurePods": 20000}, PERF_LABELS, on))
    out.append(("20000Nodes_20000Pods_OpportunisticBatchingDisabled",
                {"signatureBatchSize": 1, "initNodes": 20000, "measurePods": 20000}, PERF_LABELS, off))
    return out


_ST = "starvation/templates/"


def _starvation(podgroup: bool) -> Callable[[dict[str, Any]], list[Any]]:
    def ops(p: dict[str, Any]) -> list[Any]:
        out: list[Any] = [NodesOp(p["initNodes"], path=_ST + "node.yaml"), CreateNamespaces("starvation", 1)]
        if podgroup:
            out.append(CreatePodGroups(p["initPodGroups"], "starvation-0", _ST + "podgroup.yaml",
                                       _p(minCount=p["cloggerPods"])))
        out += [Churn(600, 1000, "starvation-0", _ST + "churn-pod.yaml"),
                PodsOp(p["cloggerPods"], namespace="starvation-0",
                       path=_ST + ("clogger-podgroup-pod.yaml" if podgroup else "clogger-pod.yaml"), skip_wait=True),
                Barrier("Attempted"),
                PodsOp(p["starvationProne"], namespace="starvation-0", path=_ST + "victim-pod.yaml",
                       collect_metrics=True, collect_namespaces=("starvation-0",))]
        return out
    return ops


V137_WORKLOADS: dict[str, Workload] = {
    # podgroup/basicscheduling/performance-config.yaml
    **register_cases("BasicScheduling", _GW, _podgroup_case(
        "basic-ns", "podgroup/basicscheduling/templates/podgroup.yaml",
        "podgroup/basicscheduling/templates/basic-pod.yaml"), _pg_sizes("Groups", _PG3, "Groups")),
    # podgroup/gangscheduling/performance-config.yaml
    **register_cases("GangScheduling", _GW, _podgroup_case(
        "gang-ns", "podgroup/gangscheduling/templates/podgroup.yaml",
        "podgroup/gangscheduling/templates/gang-pod.yaml"), _pg_sizes("Gangs", _PG3)),
    # podgroup/tas/performance-config.yaml
    **register_cases("TopologyAwareScheduling", {**_GW, "TopologyAwareWorkloadScheduling": True}, _podgroup_case(
        "tas-ns", "podgroup/tas/templates/podgroup.yaml", "podgroup/tas/templates/gang-pod.yaml",
        "podgroup/tas/templates/node.yaml"), _pg_sizes("Gangs", _PG4),
        timeout_s=1200.0),  # tas_test.go: WithPodsSchedulingTimeout(20*time.Minute)
    # workload_preemption/performance-config.yaml
    **register_cases("GangPreemptionBasic", _GW, _gang_preemption_basic, [
        ("2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods", {"initNodes": 2, "initPods": 10, "preemptorPodGroups": 1,
                                                              "podsPerGroup": 2, "gangCpuRequest": "3970m"}, IT_LABELS),
        ("100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods",
         {"initNodes": 100, "initPods": 1000, "preemptorPodGroups": 1, "podsPerGroup": 100,
          "gangCpuRequest": "3970m"}, PERF_LABELS),
        ("100Nodes_10PreemptorGangs_10Pods_Evicting_1000InitPods",
         {"initNodes": 100, "initPods": 1000, "preemptorPodGroups": 10, "podsPerGroup": 10,
          "gangCpuRequest": "3970m"}, PERF_LABELS),
    ]),
    **register_cases("GangPreemptionPodGroups", _GW, _gang_preemption_podgroups, [
        ("2Nodes_1PreemptorGang_2Pods_Evicting_2LowPriorityGangs",
         {"initNodes": 2, "lowPriorityGroups": 2, "highPriorityGroups": 1, "podsPerGroup": 2,
          "lowPriorityCpuRequest": "600m", "highPriorityCpuRequest": "3500m"}, IT_LABELS),
        ("100Nodes_1PreemptorGang_100Pods_Evicting_5LowPriorityGangs",
         {"initNodes": 100, "lowPriorityGroups": 5, "highPriorityGroups": 1, "podsPerGroup": 100,
          "lowPriorityCpuRequest": "600m", "highPriorityCpuRequest": "3500m"}, PERF_LABELS),
        ("100Nodes_10PreemptorGangs_10Pods_Evicting_50LowPriorityGangs",
         {"initNodes": 100, "lowPriorityGroups": 50, "highPriorityGroups": 10, "podsPerGroup": 10,
          "lowPriorityCpuRequest": "600m", "highPriorityCpuRequest": "3500m"}, PERF_LABELS),
    ]),
    **register_cases("GangPreemptionAffinity", _GW, _gang_preemption_affinity, [
        ("2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods",
         {"initNodes": 2, "initPods": 10, "preemptorPodGroups": 1, "podsPerGroup": 2}, IT_LABELS),
        ("100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods",
         {"initNodes": 100, "initPods": 1000, "preemptorPodGroups": 1, "podsPerGroup": 100}, PERF_LABELS),
        ("100Nodes_10PreemptorGangs_10Pods_Evicting_1000InitPods",
         {"initNodes": 100, "initPods": 1000, "preemptorPodGroups": 10, "podsPerGroup": 10}, PERF_LABELS),
    ]),
    # batching/performance-config.yaml (test case gates: none; each workload sets OpportunisticBatching)
    **register_cases("HostPortConflict", {}, _batching("templates/pod-hostport-80.yaml"), _batching_sizes(),
                config="batching/scheduler-config-no-topology.yaml"),
    **register_cases("ResourceSaturation", {}, _batching("templates/pod-saturation.yaml"), _batching_sizes(),
                config="batching/scheduler-config-no-topology.yaml"),
    # starvation/performance-config.yaml
    **register_cases("StarvationIndependent", {}, _starvation(False), [
        ("10Nodes_100Cloggers", {"initNodes": 10, "cloggerPods": 100, "starvationProne": 50}, IT_LABELS),
        ("10000Nodes_10000Cloggers", {"initNodes": 10000, "cloggerPods": 10000, "starvationProne": 500}, PERF_LABELS),
    ]),
    **register_cases("StarvationPodGroup", _GW, _starvation(True), [
        ("10Nodes_100Cloggers_Podgroup",
         {"initNodes": 10, "initPodGroups": 1, "cloggerPods": 100, "starvationProne": 50}, IT_LABELS),
        ("10000Nodes_10000Cloggers_Podgroup",
         {"initNodes": 10000, "initPodGroups": 1, "cloggerPods": 10000, "starvationProne": 500}, PERF_LABELS),
    ]),
}
"""The v1.37 workload-aware, batching and starvation workloads by ``"Case/Workload"`` (merged into
:data:`kubesched.sim.bench.WORKLOADS`)."""


#: Upstream's harness emulates this gate registry version when a workload disables NodeDeclaredFeatures
#: (GA and locked to true at 1.37).
NDF_DISABLED_GATE_VERSION = (1, 36)


def workload_features(key: str, features: FeatureGate | None = None) -> FeatureGate:
    """The gates ``key`` runs with: its test case's and workload's ``featureGates`` over the defaults
    of ``features``' emulated version; gates set explicitly in ``features`` win. Raises ConfigError
    (e.g. GenericWorkload at an emulated version before 1.35).

    As upstream's harness (``scheduler_perf.go`` ``setupTestCase``, v1.37.2): when the gates
    explicitly disable NodeDeclaredFeatures, the gate registry emulates 1.36 first
    (``SetFeatureGateEmulationVersionDuringTest``; only lowered: an emulated 1.35 stays 1.35) while
    the behaviour stays ``features``' emulated version; then the gates are set as
    ``SetFeatureGatesDuringTest`` sets them, which turns off the default-on gates depending on a
    disabled one (:meth:`FeatureGate.with_test_overrides`)."""
    base = features if features is not None else FeatureGate()
    gates = {**dict(_CASES[key].gates), **base.explicitly_set()}
    try:
        fg = FeatureGate(base.emulated_version, None, base.min_compatibility_version, base.gate_emulation_version)
        if gates.get("NodeDeclaredFeatures") is False and fg.gate_emulation_version > NDF_DISABLED_GATE_VERSION:
            fg = fg.with_gate_emulation_version(NDF_DISABLED_GATE_VERSION)
        return fg.with_test_overrides(gates)
    except ConfigError as e:
        raise ConfigError(f"workload {key}: {e}", "--feature-gates") from None


# ───────────────────────────── running ─────────────────────────────


class CountingStore(ClusterStore):
    """The store, counting pods of ``collect`` namespaces (matching ``collect_selector``) that get a
    node (upstream ``throughputCollector`` ``onPodChange``: no node before, a node after)."""

    def __init__(self) -> None:
        super().__init__(keep_events=False)
        self.collect: frozenset[str] = frozenset()
        self.collect_selector: Params = ()
        self.collected = 0

    def _notify_pod_update(self, old: Pod, new: Pod) -> None:
        if (not old.spec.node_name and new.spec.node_name and new.metadata.namespace in self.collect
                and selector_matches(self.collect_selector, new.metadata.labels)):
            self.collected += 1
        super()._notify_pod_update(old, new)


@dataclass
class _ChurnState:
    op: Churn
    slots: list[list[str | None]]
    """Per template, the name of the object in each of the ``number`` slots (recreate mode)."""
    count: int
    next_tick: float
    """Wall time (seconds since the run started) of the next ticker event."""


class VirtualTimer:
    """Virtual time for the timed ops (churn, rates): :meth:`now` is seconds since the run started;
    :meth:`sleep` advances it instead of sleeping and every scheduling attempt advances it by
    ``attempt_s``. A run given one (``execute(..., timer=VirtualTimer())``) is deterministic: the
    ticks of its churn and rate-limited ops fall between the same attempts whatever the load."""

    def __init__(self, attempt_s: float = 0.001) -> None:
        self.t = 0.0
        self.attempt_s = attempt_s

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 0.0)

    def attempted(self) -> None:
        self.t += self.attempt_s


def selector_matches(selector: Params, labels: dict[str, str]) -> bool:
    """``labels.ValidatedSetSelector``: every ``key=value`` of ``selector`` is in ``labels``."""
    return all(labels.get(k) == v for k, v in selector)


def _attempted(pod: Pod) -> bool:
    """Upstream ``isAttempted`` or scheduled."""
    return bool(pod.spec.node_name) or any(c.type == "PodScheduled" for c in pod.status.conditions)


class WorkloadRun:
    """One execution: store, scheduler, names, the pods each namespace waits for, churn, clock."""

    store_factory: Callable[[], CountingStore] = CountingStore
    """The store class (a subclass adds the driver writes its ops need)."""

    def __init__(self, workload: Workload, seed: int, registry: dict[str, Any] | None,
                 features: FeatureGate | None, progress: bool, timer: VirtualTimer | None = None) -> None:
        case = _CASES[workload.key]
        self.workload = workload
        self.case = case
        self.fg = workload_features(workload.key, features)
        if registry is None:
            from kubesched.plugins.registry import in_tree_registry

            registry = dict(in_tree_registry())
        cfg = (decode_config(TEMPLATES_137[case.config], case.config, self.fg) if case.config
               else default_config(self.fg))
        self.store = self.store_factory()
        self.clock = ManualClock()
        self.sched = Scheduler(cfg, client=self.store, lister=self.store, clock=self.clock, seed=seed,
                               registry=registry, features=self.fg)
        self.store.scheduler = self.sched
        self.rng = random.Random(seed)
        self.names = Names(self.rng)
        self.ui = Progress(progress, workload.key)
        self.namespaces: set[str] = set()
        self.wait_counts: dict[str, int] = {}
        """Upstream ``numPodsScheduledPerNamespace``: skip-wait pods per namespace, for barriers."""
        self.timer = timer
        self.wall = timer is not None or any(self.timed(op) for op in workload.ops)
        """Time follows the (wall or virtual) clock: churn, rates, backoffs expire by themselves."""
        self.t_origin = time.perf_counter()
        self.churns: list[_ChurnState] = []
        self.next_leftover_flush = 30.0
        self.attempts = 0
        self.on_progress: Callable[[], None] | None = None

    @staticmethod
    def timed(op: Any) -> bool:
        """Whether ``op`` acts on a ticker (a subclass adds its rate-limited ops)."""
        return isinstance(op, Churn)

    # -- objects --

    def ensure_ns(self, ns: str) -> None:
        if ns and ns not in self.namespaces:
            self.namespaces.add(ns)
            self.wait_counts.setdefault(ns, 0)
            self.store.add("Namespace", Namespace(metadata=ObjectMeta(name=ns)))

    def nodes(self, op: NodesOp, op_index: int) -> None:
        replace = msgspec.structs.replace
        for i in range(op.count):
            if op.path is None:
                raw: dict[str, Any] = {
                    "apiVersion": "v1", "kind": "Node", "metadata": {"generateName": f"node-{op_index}-"},
                    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                               "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                               "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
            else:
                raw = render_object(op.path, {**dict(op.params), "Index": i, "Count": op.count})
            node = decode(Node, raw)
            meta = node.metadata
            name = meta.name or self.names.generate(meta.generate_name)
            labels = dict(meta.labels)
            labels["kubernetes.io/hostname"] = name
            node = replace(node, metadata=replace(meta, name=name, generate_name="", labels=labels))
            if op.node_allocatable:  # nodeAllocatableStrategy: extra status.allocatable entries
                st = node.status
                node = replace(node, status=replace(st, allocatable={**(st.allocatable or st.capacity),
                                                                     **dict(op.node_allocatable)}))
            if op.csi_node_allocatable or op.migrated_plugins:  # … and a CSINode per node
                self.store.add_raw("CSINode", csi_node_for(op, name))
            self.store.add("Node", node)

    def pod_groups(self, op: CreatePodGroups) -> None:
        self.ensure_ns(op.namespace)
        for i in range(op.count):
            raw = render_object(op.path, {**dict(op.params), "Index": i})
            # created through the v1beta1 client whatever the template says (templates/podgroup.yaml
            # says v1alpha3; upstream decodes it into the v1beta1 type)
            raw["apiVersion"] = "scheduling.k8s.io/v1beta1"
            meta = raw.setdefault("metadata", {})
            meta["namespace"] = op.namespace
            meta.setdefault("uid", f"{self.rng.getrandbits(128):032x}")
            meta.setdefault("generation", 1)
            self.store.put_object("PodGroup", raw)
        self.store.flush()

    def pod_raw(self, path: str, params: dict[str, Any], namespace: str, index: int, count: int,
                batch: int) -> dict[str, Any]:
        """The pod ``index`` of a createPods op as created: the rendered template with its
        signature label, a generated name, the namespace, a uid and the default scheduler name.
        ``path`` empty: upstream's ``makeBasePod`` (no signature label)."""
        if not path:
            raw: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
                                   "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.1",
                                                            "ports": [{"containerPort": 80}],
                                                            "resources": {"limits": _BASE_RESOURCES,
                                                                          "requests": _BASE_RESOURCES}}]}}
        else:
            raw = render_object(path, {**params, "Index": index, "Count": count})
        meta = raw.setdefault("metadata", {})
        labels = meta.get("labels") or {}
        if path:
            labels["signature"] = f"signature-label-{index // batch}"
        meta["labels"] = labels
        if not meta.get("name"):
            meta["name"] = self.names.generate(meta.get("generateName") or "pod-")
            meta.pop("generateName", None)
        meta["namespace"] = namespace
        meta.setdefault("uid", f"{self.rng.getrandbits(128):032x}")
        spec = raw.setdefault("spec", {})
        spec.setdefault("schedulerName", "default-scheduler")  # apiserver defaulting
        return raw

    def pods(self, op: PodsOp, namespace: str) -> list[str]:
        """``createPods``: the op's pods in ``namespace`` (:meth:`add_pod` each); their keys."""
        self.ensure_ns(namespace)
        params = dict(op.params)
        return [self.add_pod(op, namespace, i, self.pod_raw(op.path, params, namespace, i, op.count,
                                                             op.signature_batch_size))
                for i in range(op.count)]

    def add_pod(self, op: PodsOp, namespace: str, index: int, raw: dict[str, Any]) -> str:
        """Create pod ``index`` of ``op`` from its mapping :meth:`pod_raw`; its key."""
        pod = decode(Pod, raw)
        self.store.add("Pod", pod)
        return pod_key(pod)

    # -- time --

    def now(self) -> float:
        """Seconds since the run started, wall or virtual."""
        if self.timer is not None:
            return self.timer.now()
        return time.perf_counter() - self.t_origin

    def sleep(self, seconds: float) -> None:
        if self.timer is not None:
            self.timer.sleep(seconds)
        else:
            time.sleep(seconds)

    def tick(self) -> None:
        """Wall-time mode: clock, churn, periodic queue flushes."""
        if not self.wall:
            return
        now = self.now()
        if now > self.clock.now():
            self.clock.set(now)
        for churn in self.churns:
            while churn.next_tick <= now:
                self.churn_tick(churn)
        if now >= self.next_leftover_flush:
            self.sched.queue.flush_unschedulable_leftover()
            self.store.flush()
            self.next_leftover_flush = now + 30.0

    def start_churn(self, op: Churn) -> None:
        self.ensure_ns(op.namespace)
        slots: list[list[str | None]] = [[None] * max(op.number, 1) for _ in op.paths]
        self.churns.append(_ChurnState(op, slots, 0, self.now() + op.interval_ms / 1000.0))

    def churn_tick(self, churn: _ChurnState) -> None:
        """One ticker event of ``runChurnOp``: in recreate mode each template's slot object is
        deleted if it exists, else a new one is created; in create mode one of each is created
        (until ``number`` ticks, if set)."""
        op = churn.op
        churn.next_tick += op.interval_ms / 1000.0
        if op.mode == "create":
            if op.number and churn.count >= op.number:
                churn.next_tick = float("inf")
                return
            for path in op.paths:
                self.churn_create(path, op.namespace)
        else:
            k = churn.count % op.number
            for slots, path in zip(churn.slots, op.paths):
                name = slots[k]
                if name is not None:
                    self.churn_delete(path, op.namespace, name)
                    slots[k] = None
                else:
                    slots[k] = self.churn_create(path, op.namespace)
        churn.count += 1

    def churn_create(self, path: str, namespace: str) -> str:
        """Create one object from the churn template ``path`` (a Pod or Service in ``namespace``,
        or a Node); returns its name."""
        raw = render_object(path, {})
        kind = raw.get("kind", "Pod")
        meta = raw.setdefault("metadata", {})
        meta["name"] = meta.get("name") or self.names.generate(meta.pop("generateName", None) or "churn-")
        meta.pop("generateName", None)
        meta.setdefault("uid", f"{self.rng.getrandbits(128):032x}")
        if kind == "Node":
            meta.setdefault("labels", {})["kubernetes.io/hostname"] = meta["name"]
            self.store.add("Node", decode(Node, raw))
        elif kind == "Pod":
            meta["namespace"] = namespace
            raw.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
            self.store.add("Pod", decode(Pod, raw))
        elif kind == "Service":
            meta["namespace"] = namespace
            self.store.add("Service", decode(Service, raw))
        else:
            raise ValueError(f"{path}: churn of kind {kind} is not supported")
        return str(meta["name"])

    def churn_delete(self, path: str, namespace: str, name: str) -> None:
        kind = render_object(path, {}).get("kind", "Pod")
        if kind == "Node":
            self.store.remove_node(name)
        elif kind == "Pod":
            self.store.remove_pod(f"{namespace}/{name}")
        else:
            self.store.remove_object(kind, namespace, name)
            self.store.flush()

    def idle_until(self) -> float | None:
        """Wall-time mode: when something can next happen (churn tick, backoff expiry, timer)."""
        cands = [c.next_tick for c in self.churns if c.next_tick != float("inf")]
        for t in (self.sched.queue.next_backoff_expiry(), self.clock.next_timer()):
            if t is not None:
                cands.append(t)
        return min(cands) if cands else None

    # -- the loop --

    def schedule_until(self, done: Callable[[], bool], what: str, check_every: int = 64) -> None:
        """Run the scheduler until ``done()`` (checked every ``check_every`` attempts and when idle).
        Raises RuntimeError after the case's timeout, or when nothing can change any more."""
        sched, store = self.sched, self.store
        deadline = self.now() + self.case.timeout_s
        timer = self.timer
        n = 0
        stalled = False
        while True:
            self.tick()
            if sched.queue.has_schedulable():
                a = sched.schedule_one()
                store.flush()
                if a is not None:
                    if timer is not None:
                        timer.attempted()
                    self.attempts += 1
                    n += 1
                    stalled = False
                    if self.on_progress is not None:
                        self.on_progress()
                    if n % check_every:
                        continue
            if done():
                return
            if self.now() > deadline:
                raise RuntimeError(f"{self.workload.key}: timed out after {self.case.timeout_s:.0f} s waiting for "
                                   f"{what}")
            if sched.queue.has_schedulable():
                continue
            if self.wall:
                nxt = self.idle_until()
                now = self.now()
                self.sleep(min(max((nxt if nxt is not None else now + 0.05) - now, 0.001), 0.05))
                continue
            # time stands still, but not forever: jump to the next backoff expiry (a pod group in
            # backoff after its preemption) or Permit timeout, once without an attempt in between
            dues = [t for t in (self.clock.next_timer(), sched.queue.next_backoff_expiry()) if t is not None]
            if not dues or stalled:
                raise RuntimeError(f"{self.workload.key}: nothing left to schedule while waiting for {what}")
            self.clock.set(max(min(dues), self.clock.now()))
            sched.queue.flush_backoff_completed()
            store.flush()
            stalled = True

    def wait_scheduled(self, want: dict[str, int], selector: Params = ()) -> None:
        """``waitUntilPodsScheduled``: every namespace of ``want`` has that many scheduled pods
        (of those ``selector`` matches)."""
        self.schedule_until(lambda: all(self.scheduled_in(n, selector) >= c for n, c in want.items()),
                            f"scheduled pods {want}", check_every=256)

    def wait_attempted(self, want: dict[str, int], selector: Params = ()) -> None:
        """``waitUntilPodsAttempted``: every namespace of ``want`` has that many attempted pods
        (of those ``selector`` matches)."""
        self.schedule_until(lambda: all(self.attempted_in(n, selector) >= c for n, c in want.items()),
                            f"attempted pods {want}", check_every=256)

    def scheduled_in(self, ns: str, selector: Params = ()) -> int:
        return sum(1 for p in self.store.pods.values() if p.metadata.namespace == ns and p.spec.node_name
                   and (not selector or selector_matches(selector, p.metadata.labels)))

    def attempted_in(self, ns: str, selector: Params = ()) -> int:
        return sum(1 for p in self.store.pods.values() if p.metadata.namespace == ns and _attempted(p)
                   and (not selector or selector_matches(selector, p.metadata.labels)))

    def barrier(self, op: Barrier) -> None:
        """``runBarrierOp``: wait for the skip-wait pods of ``op.namespaces`` (all known ones when
        empty); a Scheduled barrier then forgets those namespaces' counts."""
        nss = list(op.namespaces) or list(self.wait_counts)
        want = {ns: self.wait_counts[ns] for ns in nss}
        if op.stage == "Attempted":
            self.wait_attempted(want, op.label_selector)
            return
        self.wait_scheduled(want, op.label_selector)
        if op.namespaces:
            for ns in nss:
                self.wait_counts.pop(ns, None)
        else:
            self.wait_counts.clear()

    def begin_measured(self, res: BenchResult, t_create: float, profiler: Any) -> tuple[float, float, Any]:
        """:func:`~kubesched.sim.bench_runner.begin_measured` on this run's clock (wall or virtual)."""
        cpu0, t0, collector = begin_measured(res, t_create, profiler)
        if self.timer is None:
            return cpu0, t0, collector
        t0 = self.now()
        return cpu0, t0, ThroughputCollector(t0)

    def clock_now(self) -> float:
        """The measurement's clock: ``perf_counter`` or the virtual time."""
        return self.timer.now() if self.timer is not None else time.perf_counter()


def execute_v137(workload: Workload, *, seed: int = 0, progress: bool = False,
                 registry: dict[str, Any] | None = None, inspect: Any = None, profiler: Any = None,
                 features: FeatureGate | None = None, timer: VirtualTimer | None = None) -> BenchResult:
    """Run one workload of :data:`V137_WORKLOADS` (the :class:`~kubesched.sim.bench_runner.Workload` ``runner``);
    ``timer``: run the timed ops (churn) on this virtual clock instead of the wall clock."""
    t_begin = time.perf_counter()
    run = WorkloadRun(workload, seed, registry, features, progress, timer)
    store, sched, ui = run.store, run.sched, run.ui
    res = BenchResult(workload.key, upstream_threshold(workload, features), workload.target, workload.rss_target_mib,
                      nodes=workload.num_nodes, init_pods=workload.num_init_pods,
                      measured_pods=workload.num_measured_pods)
    try:
        mi, mop = workload.measured_op
        assert isinstance(mop, PodsOp)
        for i, op in enumerate(workload.ops[:mi]):
            if isinstance(op, NodesOp):
                task = ui.task("nodes", op.count)
                run.nodes(op, i)
                ui.update(task, op.count)
            elif isinstance(op, CreateNamespaces):
                for k in range(op.count):
                    run.ensure_ns(f"{op.prefix}-{k}")
            elif isinstance(op, CreatePodGroups):
                run.pod_groups(op)
            elif isinstance(op, Churn):
                run.start_churn(op)
            elif isinstance(op, PodsOp):
                ns = op.namespace if op.namespace is not None else f"namespace-{i}"
                task = ui.task(f"init pods ({ns})", op.count)
                run.pods(op, ns)
                if op.skip_wait:
                    run.wait_counts[ns] = run.wait_counts.get(ns, 0) + op.count
                else:
                    run.wait_scheduled({ns: op.count})
                ui.update(task, op.count)
            elif isinstance(op, Barrier):
                run.barrier(op)
            else:
                raise TypeError(f"{workload.key}: op {op!r} is not supported here")
        res.init_attempts = run.attempts
        run.attempts = 0

        # ── measured phase ──
        measured_ns = mop.namespace if mop.namespace is not None else f"namespace-{mi}"
        res.namespace = measured_ns
        run.ensure_ns(measured_ns)
        store.collect = frozenset(mop.collect_namespaces or (measured_ns,))
        store.collected = 0
        attempts = {"scheduled": 0, "unschedulable": 0, "error": 0, "skipped": 0}

        def on_attempt(a: Attempt) -> None:
            attempts[a.result] = attempts.get(a.result, 0) + 1

        sched.on_attempt = on_attempt
        t_create = time.perf_counter()
        res.setup_s = t_create - t_begin
        cpu0 = t0 = 0.0
        collector: Any = None
        if mop.collect_namespaces:  # startCollectingMetrics before the op: creation is measured too
            cpu0, t0, collector = run.begin_measured(res, t_create, profiler)
        keys = run.pods(mop, measured_ns)
        if collector is None:
            cpu0, t0, collector = run.begin_measured(res, t_create, profiler)
        task = ui.task(f"measured pods ({measured_ns})", mop.count)
        clock = run.clock_now

        def observe() -> None:
            if collector.observe(clock(), store.collected) and progress:
                ui.update(task, store.collected,
                          f"{collector.samples[-1]:.0f} pods/s" if collector.samples else "")

        run.on_progress = observe
        ns_count = mop.count
        try:
            # upstream waitUntilPodsScheduledInNamespace: `count` scheduled pods in the namespace
            run.schedule_until(lambda: run.scheduled_in(measured_ns) >= ns_count,
                               f"{ns_count} scheduled pods in {measured_ns}", check_every=1024)
        except RuntimeError as e:
            if "nothing left to schedule" not in str(e):
                raise
        end_measured(res, cpu0, t0, clock(), collector, attempts, profiler)
        ui.update(task, store.collected, f"avg {res.data.get('Average', 0):.0f} pods/s")
        res.scheduled = sum(1 for k in keys if (p := store.pods.get(k)) is not None and p.spec.node_name)
        res.unschedulable_pods = mop.count - res.scheduled
        if inspect is not None:
            inspect(store, sched)
    finally:
        ui.stop()
    return finish(res, t_begin)


V137_WORKLOADS = {k: dataclasses.replace(w, runner=execute_v137) for k, w in V137_WORKLOADS.items()}
