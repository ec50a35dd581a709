"""The one runner behind ``kubesched bench``: upstream scheduler_perf's ops, measurement and run loop.

Upstream's harness (v1.37.2 ``test/integration/scheduler_perf/scheduler_perf.go`` and ``util.go``)
starts an apiserver and a real scheduler, creates fake nodes and pods from YAML templates, and
samples the scheduling throughput every second. Here the same run happens in-process through
the same engine path as ``kubesched simulate``: a :class:`~kubesched.sim.store.ClusterStore` (the
API server) and a :class:`~kubesched.scheduler.Scheduler` built from the default
KubeSchedulerConfiguration (:func:`new_run`), with bindings going through the store.

This module holds what every topic shares: the shared templates (upstream's ``templates/``
directory, :data:`TEMPLATES`; a topic adds its own with :func:`register_templates`), the ops
(``createNodes``, ``createNamespaces``, ``createAny``, ``createPods``), :class:`Workload`, the
thresholds, the measurement (:class:`ThroughputCollector`, :class:`BenchResult`,
:func:`begin_measured` / :func:`end_measured`) and the interpreter :func:`execute` for workloads
made of those ops. A topic whose ops need more (DRA claims, pod groups, churn) sets
:attr:`Workload.runner` to its own loop built from the same pieces. Topic modules
(``bench_dra``, ``bench_podgroup``, ``bench_ndf``, ``bench_events``) import this module; :mod:`kubesched.sim.bench`
imports them and holds the catalogue and the CLI. Imports only go that way.

Measurement (upstream ``util.go`` ``throughputCollector``)
    Ops before the measured ``createPods`` run first and their pods are scheduled to
    completion, unmeasured. Then the measured pods are created (timed separately as
    ``create_s``) and the scheduling loop runs. Ticks fall every second of wall time from the
    start of the loop; at each tick the number of measured pods scheduled so far is read. As
    upstream: ticks are ignored while nothing is scheduled; the first tick with something
    scheduled only starts the collector (its partial interval is an outlier upstream and is
    dropped); a tick with no new pod is skipped and the next sample is repeated for the skipped
    intervals; the partial interval after the last tick is not sampled. ``Average`` is the
    mean of the samples and ``PercNN`` is ``sorted[ceil(len*NN/100)-1]`` — exactly upstream's
    ``collect()``. Because the engine is synchronous, ticks are evaluated after each scheduling
    attempt: a tick that fell inside an attempt sees the count from before that attempt ended,
    which is what an independent sampler would have seen.

    Extras next to the DataItem: the overall rate (measured pods / loop wall time), wall times
    per phase, attempts by result, pods left unscheduled, and peak RSS
    (``getrusage(RUSAGE_SELF).ru_maxrss``, KiB on Linux, reported in MiB; see
    :func:`kubesched.sim.bench.run_workload` for running each workload in its own process).
"""

from __future__ import annotations

import functools
import json
import os
import random
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import msgspec
import yaml

from kubesched.api.hashing import ALPHANUMS
from kubesched.api.objects import Namespace, Node, ObjectMeta, Pod, Service, decode
from kubesched.config import default_config
from kubesched.features import DEFAULT_EMULATED_VERSION, FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.scheduler import Attempt, Scheduler
from kubesched.sim.store import ClusterStore

__all__ = [
    "IT_LABELS",
    "PERF_LABELS",
    "TEMPLATES",
    "BenchResult",
    "CreateAny",
    "CreateNamespaces",
    "CreateNodes",
    "CreatePods",
    "Names",
    "Op",
    "Progress",
    "ThroughputCollector",
    "Workload",
    "begin_measured",
    "build_nodes",
    "build_pods",
    "end_measured",
    "execute",
    "finish",
    "load_raw_template",
    "load_template",
    "new_run",
    "peak_rss_mib",
    "percentile",
    "register_templates",
    "throughput_data",
    "upstream_threshold",
    "upstream_thresholds",
    "window_rate_if_apart",
]

THROUGHPUT_SAMPLE_INTERVAL = 1.0
"""Upstream ``throughputSampleInterval``: one sample per second of wall time."""

# ───────────────────────────── templates (upstream test/integration/scheduler_perf/templates) ─────────────────────────

TEMPLATES: dict[str, str] = {
    "node-default.yaml": """
apiVersion: v1
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
    "node-with-name.yaml": """
apiVersion: v1
kind: Node
metadata:
  name: scheduler-perf-node
  labels:
    kubernetes.io/hostname: scheduler-perf-node
spec: {}
status:
  capacity:
    pods: "90000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    "pod-default.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    # volumes/performance-config.yaml templates
    "pod-with-secret-volume.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: secret-volume-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
  volumes:
  - name: secret
    secret:
      secretName: secret
""",
    "pod-low-priority.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 900m
        memory: 500Mi
      requests:
        cpu: 900m
        memory: 500Mi
""",
    "pod-high-priority.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  priority: 10
  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 3000m
        memory: 500Mi
      requests:
        cpu: 3000m
        memory: 500Mi
""",
    "pv-aws.yaml": """
apiVersion: v1
kind: PersistentVolume
spec:
  accessModes:
  - ReadOnlyMany
  awsElasticBlockStore:
    volumeID: <volume-id>
  capacity:
    storage: 1Gi
  persistentVolumeReclaimPolicy: Retain
""",
    "pv-csi.yaml": """
apiVersion: v1
kind: PersistentVolume
spec:
  accessModes:
  - ReadOnlyMany
  capacity:
    storage: 1Gi
  csi:
    driver: ebs.csi.aws.com
  persistentVolumeReclaimPolicy: Retain
""",
    "pvc.yaml": """
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations:
    pv.kubernetes.io/bind-completed: "true"
spec:
  accessModes:
  - ReadOnlyMany
  resources:
    requests:
      storage: 1Gi
""",
    "pod-with-label.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
  labels:
    app: scheduler-perf
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    "daemonset-pod.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: daemonset-
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields:
          - key: metadata.name
            operator: In
            values:
            - scheduler-perf-node
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
""",
    "pod-with-node-affinity.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: node-affinity-
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: topology.kubernetes.io/zone
            operator: In
            values:
            - zone1
            - zone2
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-with-pod-affinity.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: affinity-pod-
  labels:
    color: blue
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: blue
        topologyKey: topology.kubernetes.io/zone
        namespaces: ["sched-1", "sched-0"]
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-with-pod-anti-affinity.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: anti-affinity-pod-
  labels:
    color: green
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: kubernetes.io/hostname
        namespaces: ["sched-1", "sched-0"]
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-with-pod-anti-affinity-label.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: anti-affinity-matching-pod-
  labels:
    color: green
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-with-preferred-pod-affinity.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: preferred-affinity-pod-
  labels:
    color: red
spec:
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - podAffinityTerm:
            labelSelector:
              matchLabels:
                color: red
            topologyKey: kubernetes.io/hostname
            namespaces: ["sched-1", "sched-0"]
          weight: 1
  containers:
    - image: registry.k8s.io/pause:3.10.1
      name: pause
      ports:
        - containerPort: 80
      resources:
        limits:
          cpu: 100m
          memory: 500Mi
        requests:
          cpu: 100m
          memory: 500Mi
""",
    "pod-with-preferred-pod-anti-affinity.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: preferred-anti-affinity-pod-
  labels:
    color: yellow
spec:
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - podAffinityTerm:
            labelSelector:
              matchLabels:
                color: yellow
            topologyKey: kubernetes.io/hostname
            namespaces: ["sched-1", "sched-0"]
          weight: 1
  containers:
    - image: registry.k8s.io/pause:3.10.1
      name: pause
      ports:
        - containerPort: 80
      resources:
        limits:
          cpu: 100m
          memory: 500Mi
        requests:
          cpu: 100m
          memory: 500Mi
""",
    "pod-with-topology-spreading.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: spreading-pod-
  labels:
    color: blue
spec:
  topologySpreadConstraints:
    - maxSkew: 5
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          color: blue
  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-with-preferred-topology-spreading.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: spreading-pod-
  labels:
    color: blue
spec:
  topologySpreadConstraints:
    - maxSkew: 5
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: ScheduleAnyway
      labelSelector:
        matchLabels:
          color: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "service.yaml": """
apiVersion: v1
kind: Service
metadata:
  generateName: service-
spec:
  selector:
    app: scheduler-perf
  ports:
    - protocol: TCP
      port: 80
      targetPort: 8000
""",
    "node-with-taint.yaml": """
apiVersion: v1
kind: Node
metadata:
  generateName: taint-node-
spec:
  taints:
    - effect: NoSchedule
      key: foo
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
    "namespace-with-labels.yaml": """
apiVersion: v1
kind: Namespace
metadata:
  labels:
    team: devops
""",
    "pod-anti-affinity-ns-selector.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: anti-affinity-pod-
  labels:
    color: green
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: kubernetes.io/hostname
        namespaceSelector:
          matchLabels:
            team: devops
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-preferred-anti-affinity-ns-selector.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: anti-affinity-pod-
  labels:
    color: green
spec:
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - podAffinityTerm:
          labelSelector:
            matchLabels:
              color: green
          topologyKey: kubernetes.io/hostname
          namespaceSelector:
            matchLabels:
              team: devops
        weight: 1
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-affinity-ns-selector.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: affinity-pod-
  labels:
    color: blue
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: blue
        topologyKey: topology.kubernetes.io/zone
        namespaceSelector:
          matchLabels:
            team: devops
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    "pod-preferred-affinity-ns-selector.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: preferred-affinity-pod-
  labels:
    color: red
spec:
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - podAffinityTerm:
            labelSelector:
              matchLabels:
                color: red
            topologyKey: kubernetes.io/hostname
            namespaceSelector:
              matchLabels:
                team: devops
          weight: 1
  containers:
    - image: registry.k8s.io/pause:3.10.1
      name: pause
      ports:
        - containerPort: 80
      resources:
        limits:
          cpu: 100m
          memory: 500Mi
        requests:
          cpu: 100m
          memory: 500Mi
""",
    # Upstream spells the two policies ``NodeAffinityPolicy`` / ``NodeTaintsPolicy``; its loader
    # (sigs.k8s.io/yaml.UnmarshalStrict → encoding/json) matches field names case-insensitively,
    # so they set ``nodeAffinityPolicy`` / ``nodeTaintsPolicy``. Written here as they take effect.
    "pod-with-node-inclusion-policy.yaml": """
apiVersion: v1
kind: Pod
metadata:
  generateName: spreading-pod-with-node-inclusion-policy-
  labels:
    foo: bar
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      nodeAffinityPolicy: Honor
      nodeTaintsPolicy: Honor
      labelSelector:
        matchLabels:
          foo: bar
""",
}
"""Upstream's YAML templates (``test/integration/scheduler_perf/templates/``), verbatim but for
the field-name case noted above."""

_KIND_TYPES: dict[str, type] = {"Node": Node, "Pod": Pod, "Service": Service, "Namespace": Namespace}


@functools.cache
def load_raw_template(name: str) -> dict[str, Any]:
    """A template kept as its mapping (PersistentVolume/Claim: kinds without a typed view)."""
    out: dict[str, Any] = yaml.safe_load(TEMPLATES[name])
    return out


@functools.cache
def load_template(name: str) -> Any:
    """Decode a template once (typed object); copies are made with ``msgspec.structs.replace``."""
    raw = yaml.safe_load(TEMPLATES[name])
    obj: Any = decode(_KIND_TYPES[raw["kind"]], raw)
    if isinstance(obj, Pod) and not obj.spec.scheduler_name:  # apiserver defaulting
        obj = msgspec.structs.replace(obj, spec=msgspec.structs.replace(obj.spec, scheduler_name="default-scheduler"))
    return obj


def register_templates(templates: dict[str, str]) -> None:
    """Add a topic's templates (path under upstream's scheduler_perf → YAML text) to :data:`TEMPLATES`.

    Raises ValueError when a path is already registered with a different text."""
    for path, text in templates.items():
        if TEMPLATES.get(path, text) != text:
            raise ValueError(f"template {path!r} registered twice with different contents")
    TEMPLATES.update(templates)


# ───────────────────────────── ops (upstream workloadTemplate opcodes) ─────────────────────────────


@dataclass(frozen=True)
class CreateNodes:
    """``createNodes``; ``label_key``/``label_values`` is a ``labelNodePrepareStrategy``
    (values assigned round-robin over the nodes in name order, as upstream lists them).
    ``node_allocatable`` / ``csi_node_allocatable`` / ``migrated_plugins`` are a
    ``nodeAllocatableStrategy``: extra ``status.allocatable`` (and capacity) entries, and one
    CSINode per node with those drivers' ``allocatable.count`` and the
    ``storage.alpha.kubernetes.io/migrated-plugins`` annotation."""

    count: int
    template: str = "node-default.yaml"
    label_key: str | None = None
    label_values: tuple[str, ...] = ()
    node_allocatable: tuple[tuple[str, str], ...] = ()
    csi_node_allocatable: tuple[tuple[str, int], ...] = ()
    migrated_plugins: tuple[str, ...] = ()
    declared_features: tuple[str, ...] = ()
    """``status.declaredFeatures`` written on every node after it is created (the
    nodedeclaredfeatures test's ``updateNodesWithDeclaredFeatures``; sorted)."""


@dataclass(frozen=True)
class CreateNamespaces:
    """``createNamespaces``: ``prefix-0`` … ``prefix-(count-1)``; ``template`` is the
    ``namespaceTemplatePath`` (its labels go on every namespace)."""

    prefix: str
    count: int
    template: str | None = None


@dataclass(frozen=True)
class CreateAny:
    """``createAny``: one object from a template (e.g. a Service) in ``namespace``."""

    template: str
    namespace: str = ""


@dataclass(frozen=True)
class CreatePods:
    """``createPods``; ``namespace`` None → ``namespace-<op index>``; ``collect_metrics`` marks
    the measured op."""

    count: int
    template: str = "pod-default.yaml"
    namespace: str | None = None
    collect_metrics: bool = False
    pv_template: str | None = None
    """``persistentVolumeTemplatePath``: each pod gets PV ``<ns>-vol-<i>`` and PVC ``pvc-<i>``
    bound to each other (upstream ``CreatePodWithPersistentVolume`` with ``bindVolume``)."""
    pvc_template: str | None = None


Op = CreateNodes | CreateNamespaces | CreateAny | CreatePods


@dataclass(frozen=True)
class Workload:
    """One upstream workload with its params applied."""

    case: str
    name: str
    ops: tuple[Op, ...]
    threshold: float | None = None
    """Upstream CI floor (pods/s, compared with the Average); None for non-performance workloads."""
    target: float | None = None
    """kubesched's target on the project's 2-core machine (from the issues), pods/s."""
    rss_target_mib: float | None = None
    labels: tuple[str, ...] = ()
    runner: Callable[..., Any] | None = None
    """Runs this workload instead of :func:`execute` (DRA workloads: ``bench_dra.execute_dra``)."""
    measured_count: int | None = None
    """Pods the measurement counts when it spans several ops (``startCollectingMetrics`` …
    ``stopCollectingMetrics``, no single measured ``createPods``); None: the measured op's count."""
    init_count: int | None = None
    """Pods created outside that span (with ``measured_count``)."""

    @property
    def key(self) -> str:
        return f"{self.case}/{self.name}"

    @property
    def num_nodes(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreateNodes))

    @property
    def measured_op(self) -> tuple[int, CreatePods]:
        for i, op in enumerate(self.ops):
            if isinstance(op, CreatePods) and op.collect_metrics:
                return i, op
        raise ValueError(f"workload {self.key} has no measured createPods op")

    @property
    def num_init_pods(self) -> int:
        if self.init_count is not None:
            return self.init_count
        mi, _ = self.measured_op
        return sum(op.count for i, op in enumerate(self.ops) if isinstance(op, CreatePods) and i != mi)

    @property
    def num_measured_pods(self) -> int:
        if self.measured_count is not None:
            return self.measured_count
        return self.measured_op[1].count


@functools.cache
def upstream_thresholds() -> dict[str, dict[str, float | None]]:
    """minor version → ``Case/Workload`` → threshold, from the performance-config.yaml files of
    v1.34.12, v1.35.4, v1.36.3 and v1.37.2 (``kubesched/data/scheduler_perf_thresholds.json``,
    written by ``benchmarks/scheduler_perf_coverage.py --write-thresholds``)."""
    text = resources.files("kubesched.data").joinpath("scheduler_perf_thresholds.json").read_text()
    data: dict[str, dict[str, float | None]] = json.loads(text)
    return data


def upstream_threshold(workload: Workload, features: FeatureGate | None = None) -> float | None:
    """Upstream's threshold (pods/s, the CI floor on the Average) for ``workload`` in the
    scheduler_perf of the emulated version (v1.37.2's by default; None: that release sets none or
    disables the check). A workload that release does not have keeps the figure it was ported with."""
    v = features.emulated_version if features is not None else DEFAULT_EMULATED_VERSION
    table = upstream_thresholds().get(f"{v[0]}.{v[1]}")
    if table is None or workload.key not in table:
        return workload.threshold
    return table[workload.key]


IT_LABELS = ("integration-test", "short")
"""Upstream's labels of a small, CI-run workload."""
PERF_LABELS = ("performance",)
"""Upstream's label of a workload with a throughput threshold."""

# ───────────────────────────── measurement ─────────────────────────────


def percentile(sorted_samples: Sequence[float], p: int) -> float:
    """Upstream's percentile: ``sorted[ceil(len*p/100) - 1]`` (``sorted_samples`` ascending, non-empty)."""
    n = len(sorted_samples)
    if n == 0:
        raise ValueError("no samples")
    return sorted_samples[-(-n * p // 100) - 1]


def throughput_data(samples: Sequence[float]) -> dict[str, float]:
    """Upstream ``throughputCollector.collect()``'s Data: Average (mean of the samples) and
    Perc50/90/95/99. Empty when there are no samples (upstream logs a warning then)."""
    if not samples:
        return {}
    s = sorted(samples)
    return {"Average": sum(s) / len(s), "Perc50": percentile(s, 50), "Perc90": percentile(s, 90),
            "Perc95": percentile(s, 95), "Perc99": percentile(s, 99)}


class ThroughputCollector:
    """Upstream ``throughputCollector.run`` driven by explicit observations.

    ``observe(now, scheduled)`` is called after each scheduling attempt with the number of
    measured pods scheduled so far; every tick boundary (``start + k * interval``) that passed
    since the previous observation is processed with the count as it was *before* this
    observation (the attempt that just finished had not yet bound its pod at that boundary).
    """

    def __init__(self, start: float, interval: float = THROUGHPUT_SAMPLE_INTERVAL) -> None:
        self.interval = interval
        self.next_tick = start + interval
        self.samples: list[float] = []
        self.progress: list[tuple[float, int]] = []
        """``(tick time - loop start, scheduled)`` for every tick that produced samples."""
        self.started_at: float | None = None
        self._t0 = start
        self._last_count = 0
        self._last_time = start
        self._skipped = 0
        self._prev_observed = 0
        self.first: tuple[float, int] | None = None
        """``(time.process_time(), scheduled)`` at the first observation with a measured pod bound:
        upstream's collector samples only from its first tick with a scheduled pod on, so pods the
        loop schedules before that (other namespaces' backlog, e.g. SchedulingDeletedPodsWithFinalizers'
        deleting pods queued ahead of the measured ones) are outside its window (``util.go``
        ``throughputCollector.run``: "Only do sampling if number of scheduled pods is greater than zero")."""

    def observe(self, now: float, scheduled: int) -> bool:
        """Process the ticks up to ``now``; True when at least one tick was processed."""
        if self.first is None and scheduled:
            self.first = (time.process_time(), scheduled)
        if now < self.next_tick:
            self._prev_observed = scheduled
            return False
        while self.next_tick <= now:
            self._tick(self.next_tick, self._prev_observed)
            self.next_tick += self.interval
        self._prev_observed = scheduled
        return True

    def _tick(self, t: float, scheduled: int) -> None:
        if scheduled == 0:
            return
        if self.started_at is None:  # skip the initial sample, as upstream
            self.started_at = t
            self._last_count = scheduled
            self._last_time = t
            return
        new = scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        rate = new / (t - self._last_time)
        self.samples.extend([rate] * (self._skipped + 1))
        self.progress.append((t - self._t0, scheduled))
        self._last_count = scheduled
        self._last_time = t
        self._skipped = 0

    def data(self) -> dict[str, float]:
        return throughput_data(self.samples)


# ───────────────────────────── results ─────────────────────────────


def peak_rss_mib() -> float:
    """Peak resident set size of this process (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def window_rate_if_apart(per_cpu: float, window: float | None) -> float | None:
    """``window`` (pods per CPU-second in upstream's sampling window, :attr:`BenchResult.per_cpu_window`)
    when it is more than 5 % away from ``per_cpu`` (the whole measured loop's): then pods outside the
    window (another namespace's backlog) weighed on the loop, and the window's rate is the one to
    compare with upstream; None otherwise."""
    if window is None or abs(window - per_cpu) <= 0.05 * per_cpu:
        return None
    return window


@dataclass
class BenchResult:
    """One workload's figures. :meth:`to_dict` gives scheduler_perf DataItems plus extras."""

    workload: str
    threshold: float | None = None
    target: float | None = None
    rss_target_mib: float | None = None
    data: dict[str, float] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)
    nodes: int = 0
    init_pods: int = 0
    measured_pods: int = 0
    scheduled: int = 0
    """Measured pods bound at the end."""
    attempts: dict[str, int] = field(default_factory=dict)
    """Measured-phase scheduling attempts by result (scheduled / unschedulable / error / skipped)."""
    init_attempts: int = 0
    unschedulable_pods: int = 0
    """Measured pods left unscheduled at the end."""
    measured_wall_s: float = 0.0
    """From the start of the measured scheduling loop to its end."""
    measured_cpu_s: float = 0.0
    """CPU time of this process over the measured loop (``time.process_time``): with other
    load on the machine, ``scheduled / measured_cpu_s`` estimates the uncontended rate."""
    window_cpu_s: float | None = None
    """CPU time from the first measured pod bound to the end of the loop (upstream's sampling window,
    :attr:`ThroughputCollector.first`); None when the runner did not observe it."""
    window_first: int = 0
    """Measured pods already bound when that window opened."""
    loadavg: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """``os.getloadavg()`` when the measured loop ended (other load skews wall-clock figures)."""
    create_s: float = 0.0
    setup_s: float = 0.0
    """Nodes, namespaces, objects and init pods created and init pods scheduled."""
    total_wall_s: float = 0.0
    peak_rss_mib: float = 0.0
    namespace: str = ""
    isolated: bool = False
    """Ran in its own subprocess."""
    python: str = field(default_factory=lambda: sys.version.split()[0])

    @property
    def average(self) -> float | None:
        return self.data.get("Average")

    @property
    def overall(self) -> float:
        """Measured pods scheduled / measured loop wall time."""
        return self.scheduled / self.measured_wall_s if self.measured_wall_s > 0 else 0.0

    @property
    def per_cpu(self) -> float:
        """Measured pods scheduled / CPU seconds of the measured loop."""
        return self.scheduled / self.measured_cpu_s if self.measured_cpu_s > 0 else 0.0

    @property
    def per_cpu_window(self) -> float | None:
        """Measured pods bound after the first one / CPU seconds since it (upstream's window); None
        without a window."""
        if self.window_cpu_s is None or self.window_cpu_s <= 0:
            return None
        return (self.scheduled - self.window_first) / self.window_cpu_s

    def data_items(self) -> list[dict[str, Any]]:
        case, _, wl = self.workload.partition("/")
        name = f"BenchmarkPerfScheduling/{case}/{wl}/{self.namespace}" if self.namespace else self.workload
        items: list[dict[str, Any]] = [{"labels": {"Metric": "SchedulingThroughput", "Name": name},
                                        "unit": "pods/s", "data": dict(self.data)}]
        items.append({"labels": {"Metric": "PeakRSS", "Name": name}, "unit": "MiB",
                      "data": {"Max": round(self.peak_rss_mib, 1)}})
        return items

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": "v1", "dataItems": self.data_items(), "workload": self.workload}
        out.update({
            "threshold": self.threshold, "target": self.target, "rssTargetMiB": self.rss_target_mib,
            "nodes": self.nodes, "initPods": self.init_pods, "measuredPods": self.measured_pods,
            "scheduled": self.scheduled, "unschedulablePods": self.unschedulable_pods,
            "attempts": dict(self.attempts), "initAttempts": self.init_attempts,
            "overallPodsPerSecond": round(self.overall, 1), "measuredWallSeconds": round(self.measured_wall_s, 3),
            "measuredCPUSeconds": round(self.measured_cpu_s, 3), "podsPerCPUSecond": round(self.per_cpu, 1),
            "windowCPUSeconds": None if self.window_cpu_s is None else round(self.window_cpu_s, 3),
            "windowFirstScheduled": self.window_first,
            "podsPerCPUSecondInWindow": None if (w := self.per_cpu_window) is None else round(w, 1),
            "loadAvg": [round(x, 2) for x in self.loadavg],
            "createSeconds": round(self.create_s, 3), "setupSeconds": round(self.setup_s, 3),
            "totalWallSeconds": round(self.total_wall_s, 3), "peakRSSMiB": round(self.peak_rss_mib, 1),
            "samples": [round(s, 2) for s in self.samples],
            "isolated": self.isolated, "python": self.python,
        })
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchResult:
        r = cls(d["workload"])
        items = d.get("dataItems") or [{}]
        r.data = dict(items[0].get("data") or {})
        name = (items[0].get("labels") or {}).get("Name", "")
        r.namespace = name.rsplit("/", 1)[-1] if name.startswith("BenchmarkPerfScheduling/") else ""
        r.threshold, r.target, r.rss_target_mib = d.get("threshold"), d.get("target"), d.get("rssTargetMiB")
        r.nodes, r.init_pods, r.measured_pods = d["nodes"], d["initPods"], d["measuredPods"]
        r.scheduled, r.unschedulable_pods = d["scheduled"], d["unschedulablePods"]
        r.attempts, r.init_attempts = dict(d["attempts"]), d["initAttempts"]
        r.measured_wall_s, r.create_s = d["measuredWallSeconds"], d["createSeconds"]
        r.measured_cpu_s, r.loadavg = d.get("measuredCPUSeconds", 0.0), tuple(d.get("loadAvg") or (0.0, 0.0, 0.0))
        r.window_cpu_s, r.window_first = d.get("windowCPUSeconds"), d.get("windowFirstScheduled", 0)
        r.setup_s, r.total_wall_s, r.peak_rss_mib = d["setupSeconds"], d["totalWallSeconds"], d["peakRSSMiB"]
        r.samples = list(d.get("samples") or [])
        r.isolated, r.python = bool(d.get("isolated")), d.get("python", r.python)
        return r

    def summary(self) -> str:
        parts = [f"{self.workload}:"]
        if self.data:
            d = self.data
            parts.append(f"Average {d['Average']:.0f} pods/s (P50 {d['Perc50']:.0f}, P90 {d['Perc90']:.0f}, "
                         f"P95 {d['Perc95']:.0f}, P99 {d['Perc99']:.0f}; {len(self.samples)} samples)")
        else:
            parts.append("no 1-s samples (run too short)")
        parts.append(f"| overall {self.overall:.0f} pods/s, {self.scheduled}/{self.measured_pods} scheduled "
                     f"in {self.measured_wall_s:.2f} s, {sum(self.attempts.values())} attempts, "
                     f"{self.unschedulable_pods} left unschedulable, {self.per_cpu:.0f} pods/CPU-s"
                     + (f" ({w:.0f} from the first measured bind)"
                        if (w := window_rate_if_apart(self.per_cpu, self.per_cpu_window)) is not None else "")
                     + f", load {self.loadavg[0]:.1f}")
        parts.append(f"| peak RSS {self.peak_rss_mib:.0f} MiB"
                     + (f" (target < {self.rss_target_mib:.0f})" if self.rss_target_mib else ""))
        parts.append(f"| total {self.total_wall_s:.1f} s")
        avg = self.average
        verdict = []
        if avg is None and self.scheduled:
            # too short for one 1-s sample: judge by the overall rate, and say so
            avg = self.overall
            verdict.append("judged by overall rate (no 1-s samples)")
        if self.threshold is not None:
            ok = avg is not None and avg >= self.threshold
            verdict.append(f"upstream floor {self.threshold:g} {'PASS' if ok else 'FAIL'}")
        if self.target is not None:
            ok = avg is not None and avg >= self.target
            verdict.append(f"kubesched target ≥ {self.target:g} {'MET' if ok else 'MISSED'}")
        if verdict:
            parts.append("| " + ", ".join(verdict))
        return " ".join(parts)


# ───────────────────────────── running ─────────────────────────────


class Names:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def generate(self, prefix: str) -> str:
        choices = self.rng.choices
        while True:
            name = prefix + "".join(choices(ALPHANUMS, k=5))
            if name not in self.used:
                self.used.add(name)
                return name


class Progress:
    """Rich progress on stderr (manual refresh so that no thread competes with the loop)."""

    def __init__(self, enabled: bool, title: str) -> None:
        self.p = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ImportError:  # pragma: no cover
            return
        self.p = Progress(TextColumn(f"[bold]{title}[/] {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), TextColumn("{task.fields[rate]}"),
                          console=Console(stderr=True), auto_refresh=False, transient=False)
        self.p.start()

    def task(self, desc: str, total: int) -> Any:
        if self.p is None:
            return None
        return self.p.add_task(desc, total=total, rate="")

    def update(self, task: Any, completed: int, rate: str = "") -> None:
        if self.p is not None and task is not None:
            self.p.update(task, completed=completed, rate=rate)
            self.p.refresh()

    def stop(self) -> None:
        if self.p is not None:
            self.p.stop()


def build_nodes(op: CreateNodes, names: Names) -> list[Node]:
    tpl: Node = load_template(op.template)
    meta = tpl.metadata
    if meta.name:  # a fixed name (node-with-name.yaml): one node
        fixed = [meta.name] * op.count
    else:
        fixed = [names.generate(meta.generate_name) for _ in range(op.count)]
    label_of: dict[str, str] = {}
    if op.label_key and op.label_values:
        vals = op.label_values
        for i, n in enumerate(sorted(set(fixed))):  # upstream labels the listed (name-ordered) nodes
            label_of[n] = vals[i % len(vals)]
    out = []
    replace = msgspec.structs.replace
    for n in fixed:
        labels = dict(meta.labels)
        labels["kubernetes.io/hostname"] = n
        if n in label_of:
            labels[op.label_key] = label_of[n]  # type: ignore[index]
        node = replace(tpl, metadata=replace(meta, name=n, generate_name="", labels=labels))
        if op.node_allocatable:
            extra = dict(op.node_allocatable)
            st = node.status
            node = replace(node, status=replace(st, capacity={**st.capacity, **extra},
                                                allocatable={**st.allocatable, **extra} if st.allocatable else {}))
        if op.declared_features:
            node = replace(node, status=replace(node.status, declared_features=list(op.declared_features)))
        out.append(node)
    return out


def csi_node_for(op: CreateNodes, name: str) -> dict[str, Any]:
    """The CSINode upstream's ``nodeAllocatableStrategy`` creates for node ``name``."""
    meta: dict[str, Any] = {"name": name}
    if op.migrated_plugins:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": ",".join(op.migrated_plugins)}
    drivers = [{"name": d, "nodeID": name, "allocatable": {"count": c}} for d, c in op.csi_node_allocatable]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}}


def add_volumes(store: ClusterStore, op: CreatePods, namespace: str, pods: list[Pod], first_id: int) -> list[Pod]:
    """Upstream ``CreatePodWithPersistentVolume`` (bindVolume): per pod ``i`` a PV ``<ns>-vol-<i>``
    (``volumeID``/``volumeHandle`` ``vol-<i>``, ``claimRef`` to ``pvc-<i>``, phase Bound) and the
    PVC ``pvc-<i>`` (``volumeName`` set, phase Bound); the pod's only volume uses the claim."""
    from kubesched.api.objects import PersistentVolumeClaimVolumeSource, Volume

    pv_tpl = load_raw_template(op.pv_template)
    pvc_tpl = load_raw_template(op.pvc_template or "pvc.yaml")
    replace = msgspec.structs.replace
    out = []
    for k, pod in enumerate(pods):
        i = first_id + k
        vol_id = f"vol-{i}"
        pvc_name = f"pvc-{i}"
        pv_spec = dict(pv_tpl["spec"])
        if "csi" in pv_spec:
            pv_spec["csi"] = {**pv_spec["csi"], "volumeHandle": vol_id}
        elif "awsElasticBlockStore" in pv_spec:
            pv_spec["awsElasticBlockStore"] = {**pv_spec["awsElasticBlockStore"], "volumeID": vol_id}
        pv_name = f"{namespace}-{vol_id}"
        pv_spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": pvc_name,
                               "apiVersion": "v1"}
        store.add_raw("PersistentVolume", {"apiVersion": "v1", "kind": "PersistentVolume",
                                           "metadata": {"name": pv_name}, "spec": pv_spec,
                                           "status": {"phase": "Bound"}})
        pvc_meta = {**(pvc_tpl.get("metadata") or {}), "name": pvc_name, "namespace": namespace}
        store.add_raw("PersistentVolumeClaim", {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                                "metadata": pvc_meta,
                                                "spec": {**pvc_tpl["spec"], "volumeName": pv_name},
                                                "status": {"phase": "Bound"}})
        vols = [Volume(name="vol", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=pvc_name))]
        out.append(replace(pod, spec=replace(pod.spec, volumes=vols)))
    return out


def build_pods(op: CreatePods, namespace: str, names: Names) -> list[Pod]:
    tpl: Pod = load_template(op.template)
    meta = tpl.metadata
    prefix = meta.generate_name or "pod-"
    base = msgspec.structs.replace(meta, generate_name="", namespace=namespace)
    replace = msgspec.structs.replace
    return [replace(tpl, metadata=replace(base, name=names.generate(prefix))) for _ in range(op.count)]


def new_run(workload: Workload, seed: int, registry: dict[str, Any] | None,
             features: FeatureGate | None = None) -> tuple[BenchResult, ClusterStore, Scheduler]:
    """The result record of one run of ``workload``, an empty store and a scheduler over it with
    the default configuration of ``features`` (``registry``: the in-tree plugins when None)."""
    if registry is None:
        from kubesched.plugins.registry import in_tree_registry

        registry = dict(in_tree_registry())
    res = BenchResult(workload.key, upstream_threshold(workload, features), workload.target,
                      workload.rss_target_mib, nodes=workload.num_nodes, init_pods=workload.num_init_pods,
                      measured_pods=workload.num_measured_pods)
    store = ClusterStore(keep_events=False)
    sched = Scheduler(default_config(features), client=store, lister=store, clock=ManualClock(), seed=seed,
                      registry=registry, features=features)
    store.scheduler = sched
    return res, store, sched


def begin_measured(res: BenchResult, t_create: float,
                    profiler: Any) -> tuple[float, float, ThroughputCollector]:
    """Start the measured scheduling loop: the profiler (if any), then CPU and wall clocks;
    records ``res.create_s`` (since ``t_create``). Returns ``(cpu0, t0, collector)``."""
    if profiler is not None:
        profiler.start()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    res.create_s = t0 - t_create
    return cpu0, t0, ThroughputCollector(t0)


def end_measured(res: BenchResult, cpu0: float, t0: float, t1: float, collector: ThroughputCollector,
                  attempts: dict[str, int], profiler: Any) -> None:
    """End the measured loop (ended at wall time ``t1``): CPU seconds (before the profiler stops),
    load average, wall seconds, the throughput data and samples, the attempt counts."""
    cpu1 = time.process_time()
    res.measured_cpu_s = cpu1 - cpu0
    if collector.first is not None:
        res.window_cpu_s, res.window_first = cpu1 - collector.first[0], collector.first[1]
    if profiler is not None:
        profiler.stop()
    res.loadavg = os.getloadavg()
    res.measured_wall_s = t1 - t0
    res.data = collector.data()
    res.samples = list(collector.samples)
    res.attempts = attempts


def finish(res: BenchResult, t_begin: float) -> BenchResult:
    """Close a run's record: total wall seconds since ``t_begin`` (``perf_counter``) and peak RSS."""
    res.total_wall_s = time.perf_counter() - t_begin
    res.peak_rss_mib = peak_rss_mib()
    return res


def execute(workload: Workload, *, seed: int = 0, progress: bool = False,
            registry: dict[str, Any] | None = None,
            inspect: Callable[[ClusterStore, Scheduler], None] | None = None,
            profiler: Any = None, features: FeatureGate | None = None, timer: Any = None) -> BenchResult:
    """Run ``workload`` in this process (see the module docstring for the measurement).

    ``features``: the gates at the emulated version (default v1.37's).
    ``inspect(store, scheduler)`` is called at the end (tests look at the cluster with it).
    ``profiler`` (anything with ``start()``/``stop()``, e.g. a pyinstrument ``Profiler``) runs
    around the measured scheduling loop only. ``timer`` (a runner with timed ops only, e.g.
    ``bench_podgroup.VirtualTimer``): their ticks follow this virtual clock, not the wall clock.
    """
    if workload.runner is not None:
        extra = {"timer": timer} if timer is not None else {}
        return workload.runner(workload, seed=seed, progress=progress, registry=registry, inspect=inspect,
                               profiler=profiler, features=features, **extra)
    if timer is not None:
        raise ValueError(f"workload {workload.key} has no timed ops: timer= is not supported")
    t_begin = time.perf_counter()
    res, store, sched = new_run(workload, seed, registry, features)
    names = Names(random.Random(seed))
    ui = Progress(progress, workload.key)
    try:
        mi, mop = workload.measured_op
        measured_ns = mop.namespace if mop.namespace is not None else f"namespace-{mi}"
        res.namespace = measured_ns
        namespaces: set[str] = set()

        def ensure_ns(ns: str, labels: dict[str, str] | None = None) -> None:
            if ns and ns not in namespaces:
                namespaces.add(ns)
                store.add("Namespace", Namespace(metadata=ObjectMeta(name=ns, labels=dict(labels or {}))))

        # ── setup: every op before the measured one ──
        init_attempts = 0
        volume_ids = [0]  # upstream numbers the PV/PVC pairs per createPods op from 0; unique here
        for i, op in enumerate(workload.ops[:mi]):
            if isinstance(op, CreateNodes):
                task = ui.task("nodes", op.count)
                for node in build_nodes(op, names):
                    if op.csi_node_allocatable or op.migrated_plugins:
                        store.add_raw("CSINode", csi_node_for(op, node.metadata.name))
                    store.add("Node", node)
                ui.update(task, op.count)
            elif isinstance(op, CreateNamespaces):
                ns_labels = load_template(op.template).metadata.labels if op.template else None
                for k in range(op.count):
                    ensure_ns(f"{op.prefix}-{k}", ns_labels)
            elif isinstance(op, CreateAny):
                obj = load_template(op.template)
                ensure_ns(op.namespace)
                nm = obj.metadata.name or names.generate(obj.metadata.generate_name)
                obj = msgspec.structs.replace(obj, metadata=msgspec.structs.replace(
                    obj.metadata, name=nm, generate_name="", namespace=op.namespace))
                store.add(obj.kind, obj)
            elif isinstance(op, CreatePods):
                ns = op.namespace if op.namespace is not None else f"namespace-{i}"
                ensure_ns(ns)
                task = ui.task(f"init pods ({ns})", op.count)
                init_pods = build_pods(op, ns, names)
                if op.pv_template:
                    init_pods = add_volumes(store, op, ns, init_pods, volume_ids[0])
                    volume_ids[0] += len(init_pods)
                for pod in init_pods:
                    store.add("Pod", pod)
                del init_pods
                # upstream waits for the init pods to be scheduled before the next op
                done = 0
                last = time.perf_counter()
                while sched.queue.has_schedulable():
                    if sched.schedule_one() is None:
                        break
                    store.flush()
                    init_attempts += 1
                    done += 1
                    if progress and not done & 255:
                        now = time.perf_counter()
                        if now - last > 0.2:
                            ui.update(task, done)
                            last = now
                ui.update(task, op.count)
        res.init_attempts = init_attempts

        # ── measured phase ──
        ensure_ns(measured_ns)
        t_create = time.perf_counter()
        res.setup_s = t_create - t_begin
        pods = build_pods(mop, measured_ns, names)
        if mop.pv_template:
            pods = add_volumes(store, mop, measured_ns, pods, volume_ids[0])
        for pod in pods:
            store.add("Pod", pod)
        del pods
        task = ui.task(f"measured pods ({measured_ns})", mop.count)
        prefix = measured_ns + "/"
        attempts = {"scheduled": 0, "unschedulable": 0, "error": 0, "skipped": 0}
        counter = [0]

        def on_attempt(a: Attempt) -> None:
            attempts[a.result] = attempts.get(a.result, 0) + 1
            if a.result == "scheduled" and a.pod_key.startswith(prefix):
                counter[0] += 1

        sched.on_attempt = on_attempt
        clock = time.perf_counter
        queue = sched.queue
        schedule_one = sched.schedule_one
        flush = store.flush
        cpu0, t0, collector = begin_measured(res, t_create, profiler)
        while queue.has_schedulable():
            a = schedule_one()
            if a is None:
                break
            flush()  # the bind's watch event confirms the assumed pod, as live
            if a.result == "skipped":
                attempts["skipped"] += 1
            if collector.observe(clock(), counter[0]) and progress:
                rate = f"{collector.samples[-1]:.0f} pods/s" if collector.samples else ""
                ui.update(task, counter[0], rate)
        end_measured(res, cpu0, t0, clock(), collector, attempts, profiler)
        ui.update(task, counter[0], f"avg {res.data.get('Average', 0):.0f} pods/s")
        res.scheduled = sum(1 for k, p in store.pods.items() if k.startswith(prefix) and p.spec.node_name)
        res.unschedulable_pods = mop.count - res.scheduled
        if inspect is not None:
            inspect(store, sched)
    finally:
        ui.stop()
    return finish(res, t_begin)
