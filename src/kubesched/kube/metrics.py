"""kube-scheduler's Prometheus metrics, with upstream's names, labels and buckets.

Follows ``pkg/scheduler/metrics/metrics.go`` (definitions and buckets), ``metric_recorder.go``
and the call sites in ``pkg/scheduler/schedule_one.go`` (``PodScheduled`` / ``PodUnschedulable``
/ ``PodScheduleError``, ``PodSchedulingAttempts``, ``PodSchedulingSLIDuration`` with its
``attempts`` label capped at ``"15+"``) and ``internal/queue/scheduling_queue.go``
(``pending_pods``, ``queue_incoming_pods_total``, ``queue_incoming_entities_total``,
``pod_scheduled_after_flush_total``, ``unschedulable_pods``), plus
``leader_election_master_status{name}`` (``component-base/metrics/prometheus/clientgo/leaderelection``).

One :class:`SchedulerMetrics` owns its own ``prometheus_client.CollectorRegistry`` (no global
state), served by :mod:`kubesched.kube.endpoints` at ``/metrics``. Gauges that mirror engine
state (queue sizes, per-plugin unschedulable pods, cache size) and the cumulative
``queue_incoming_pods_total`` are refreshed from the engine by :meth:`SchedulerMetrics.update_from`
right before each scrape (equal to upstream's increment/decrement bookkeeping, read at scrape
time). Counters do not expose prometheus_client's ``*_created`` samples (upstream has none).

Versions (``features``, the emulated release): HELP texts carry component-base's stability
prefix (``[ALPHA] ``, ``[BETA] ``, ``[STABLE] ``) at the level of that release — 1.36 promoted
``permit_wait_duration_seconds`` and ``unschedulable_pods`` to BETA, 1.37
``scheduling_algorithm_duration_seconds`` and ``plugin_execution_duration_seconds``;
``pod_scheduled_after_flush_total`` exists since 1.36; since 1.37 ``pending_pods{queue}`` also has
``incomplete`` and ``pending`` (pod-group pools, always 0 here) and
``queue_incoming_entities_total{queue,event,type}`` counts pods (``type="pod"``) entering a queue
other than the one their queueing strategy named (``metrics.go`` L300-460, v1.37.2).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client import Histogram as _PromHistogram
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from kubesched.features import FeatureGate, default_feature_gate

__all__ = ["SchedulerMetrics", "attempts_label", "exponential_buckets", "pod_limits", "pod_resource_metrics"]

# upstream's metrics have no *_created series; this switch is process-wide in prometheus_client
prometheus_client.disable_created_metrics()


class Histogram(_PromHistogram):
    """prometheus_client's ``Histogram`` (same names, labels, buckets and exposition) whose series
    count their observations in plain Python: ``observe`` is one ``bisect`` into the upper bounds
    (a value lands in the first bucket whose bound is >= it, as ``le`` means) and two additions,
    where prometheus_client takes a lock for the sum and walks the bounds to the bucket and takes
    another. The scheduler observes ~10 series per pod, all from the event loop's thread (or from
    the scheduling cycle's worker thread while the loop's engine gate keeps the rest of the engine
    still), so no lock is needed. Exemplars are not supported (none are recorded)."""

    def _metric_init(self) -> None:
        super()._metric_init()
        self._counts = [0] * len(self._upper_bounds)
        self._total = 0.0
        # only observable instances (unlabelled histograms, labelled children) are initialised:
        # a labelled parent keeps the class's ``observe``, which raises for missing label values
        self.observe = self._observe_fast  # type: ignore[method-assign]

    def _observe_fast(self, amount: float, exemplar: dict[str, str] | None = None) -> None:
        if exemplar:
            raise ValueError("exemplars are not supported by kubesched's histograms")
        self._counts[bisect_left(self._upper_bounds, amount)] += 1
        self._total += amount

    def _child_samples(self) -> Iterable[Sample]:
        samples = []
        acc = 0
        for bound, n in zip(self._upper_bounds, self._counts, strict=True):
            acc += n
            samples.append(Sample("_bucket", {"le": floatToGoString(bound)}, acc, None, None))
        samples.append(Sample("_count", {}, acc, None, None))
        if self._upper_bounds[0] >= 0:
            samples.append(Sample("_sum", {}, self._total, None, None))
        return tuple(samples)


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """component-base ``ExponentialBuckets``: ``count`` upper bounds ``start × factor^i``."""
    if count < 1 or start <= 0 or factor <= 1:
        raise ValueError("exponential_buckets needs count >= 1, start > 0, factor > 1")
    return [start * factor ** i for i in range(count)]


def attempts_label(attempts: int) -> str:
    """``getAttemptsLabel``: the attempt count, or ``"15+"`` from 15 on."""
    return "15+" if attempts >= 15 else str(attempts)


QUEUES = ("active", "backoff", "unschedulable", "gated")
QUEUES_137 = (*QUEUES, "incomplete", "pending")
"""``pending_pods{queue}`` values since 1.37 (pod-group pools; always 0 without GenericWorkload)."""

_STABILITY: dict[str, tuple[tuple[tuple[int, int], str], ...]] = {
    # metric → ((from release, level), ...), latest first (pkg/scheduler/metrics/metrics.go per release)
    "scheduler_schedule_attempts": (((1, 0), "STABLE"),),
    "scheduler_scheduling_attempt_duration_seconds": (((1, 0), "STABLE"),),
    "scheduler_scheduling_algorithm_duration_seconds": (((1, 37), "BETA"), ((1, 0), "ALPHA")),
    "scheduler_preemption_victims": (((1, 0), "STABLE"),),
    "scheduler_preemption_attempts": (((1, 0), "STABLE"),),
    "scheduler_workload_preemption_attempts": (((1, 0), "ALPHA"),),
    "scheduler_workload_preemption_victims": (((1, 0), "ALPHA"),),
    "scheduler_preemption_workload_disruptions": (((1, 0), "ALPHA"),),
    "scheduler_preemption_pdb_violations": (((1, 0), "ALPHA"),),
    "scheduler_preemption_evaluation_duration_seconds": (((1, 0), "ALPHA"),),
    "scheduler_preemption_execution_duration_seconds": (((1, 0), "ALPHA"),),
    "scheduler_pending_pods": (((1, 0), "STABLE"),),
    "scheduler_pod_scheduling_sli_duration_seconds": (((1, 0), "BETA"),),
    "scheduler_pod_scheduling_attempts": (((1, 0), "STABLE"),),
    "scheduler_pod_scheduled_after_flush": (((1, 0), "ALPHA"),),
    "scheduler_framework_extension_point_duration_seconds": (((1, 0), "STABLE"),),
    "scheduler_plugin_execution_duration_seconds": (((1, 37), "BETA"), ((1, 0), "ALPHA")),
    "scheduler_queue_incoming_pods": (((1, 0), "STABLE"),),
    "scheduler_queue_incoming_entities": (((1, 0), "ALPHA"),),
    "scheduler_queued_entities": (((1, 0), "ALPHA"),),
    "scheduler_podgroup_schedule_attempts": (((1, 0), "ALPHA"),),
    "scheduler_podgroup_scheduling_attempt_duration_seconds": (((1, 0), "ALPHA"),),
    "scheduler_podgroup_scheduling_algorithm_duration_seconds": (((1, 0), "ALPHA"),),
    "scheduler_permit_wait_duration_seconds": (((1, 36), "BETA"), ((1, 0), "ALPHA")),
    "scheduler_cache_size": (((1, 0), "ALPHA"),),
    "scheduler_unschedulable_pods": (((1, 36), "BETA"), ((1, 0), "ALPHA")),
    "scheduler_generated_placements": (((1, 0), "ALPHA"),),
    "scheduler_placement_evaluations": (((1, 0), "ALPHA"),),
    "scheduler_placement_evaluation_duration_seconds": (((1, 0), "ALPHA"),),
    "leader_election_master_status": (((1, 0), "ALPHA"),),
    "leader_election_slowpath": (((1, 0), "ALPHA"),),
}


def stability_level(metric: str, version: tuple[int, int]) -> str:
    """The metric's stability level at release ``version`` (``ALPHA``/``BETA``/``STABLE``)."""
    for since, level in _STABILITY[metric]:
        if version >= since:
            return level
    raise KeyError(metric)


class SchedulerMetrics:
    """The scheduler's metrics in one registry.

    Attributes are the prometheus_client collectors, named after upstream's Go variables.
    Feeding (all synchronous, cheap):

    - :meth:`observe_attempt` — after every scheduling attempt (the runner times it);
    - :meth:`update_from` — before a scrape, reads queue/cache state from a ``Scheduler``;
    - :meth:`observe_extension_point`, :meth:`observe_algorithm`, :meth:`observe_preemption_attempt`,
      :meth:`observe_preemption_victims`, :meth:`observe_permit_wait`, :meth:`observe_plugin` — the
      engine's :class:`~kubesched.framework.metrics.MetricsRecorder` protocol (``Scheduler(metrics=...)``);
    - :meth:`leader_on` / :meth:`leader_off` — the leader elector's metrics provider.
    """

    def __init__(self, registry: CollectorRegistry | None = None, features: FeatureGate | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.features = features if features is not None else default_feature_gate()
        version = self.features.emulated_version

        def h(metric: str, text: str) -> str:  # component-base annotateStabilityLevel
            return f"[{stability_level(metric, version)}] {text}"

        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts", h("scheduler_schedule_attempts",
                                             "Number of attempts to schedule pods, by the result. 'unschedulable' "
                                             "means a pod could not be scheduled, while 'error' means an internal "
                                             "scheduler problem."),
            ["result", "profile"], registry=r)
        self.scheduling_latency = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            h("scheduler_scheduling_attempt_duration_seconds",
              "Scheduling attempt latency in seconds (scheduling algorithm + binding)"),
            ["result", "profile"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.scheduling_algorithm_latency = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            h("scheduler_scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds"),
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        victims_help = "Number of selected preemption victims"
        if self.features.at_least(1, 37):
            victims_help += " for preemption initiated by a single pod"
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims", h("scheduler_preemption_victims", victims_help),
            buckets=exponential_buckets(1, 2, 7), registry=r)
        self.workload_preemption_attempts: Counter | None = None
        """Workload-aware preemption (1.37 with GenericWorkload; None otherwise, as upstream's
        ``Register`` adds them only then): ``workload_preemption_attempts_total{result}``,
        ``workload_preemption_victims``, ``preemption_workload_disruptions{preemptor}``,
        ``preemption_pdb_violations_total{preemptor}``, ``preemption_evaluation_duration_seconds`` and
        ``preemption_execution_duration_seconds`` ``{preemptor,result}`` (metrics.go L619-670, v1.37.2)."""
        self.workload_preemption_victims: Histogram | None = None
        self.preemption_workload_disruptions: Histogram | None = None
        self.preemption_pdb_violations: Counter | None = None
        self.preemption_evaluation_duration: Histogram | None = None
        self.preemption_execution_duration: Histogram | None = None
        if self.features.at_least(1, 37) and self.features.enabled("GenericWorkload"):
            self.workload_preemption_attempts = Counter(
                "scheduler_workload_preemption_attempts",
                h("scheduler_workload_preemption_attempts",
                  "Total preemption attempts initiated by workload (including pod groups) in the cluster till now."),
                ["result"], registry=r)
            self.workload_preemption_victims = Histogram(
                "scheduler_workload_preemption_victims",
                h("scheduler_workload_preemption_victims", "Number of pod preemption victims caused by workload "
                  "preemption."), buckets=exponential_buckets(1, 2, 11), registry=r)
            self.preemption_workload_disruptions = Histogram(
                "scheduler_preemption_workload_disruptions",
                h("scheduler_preemption_workload_disruptions",
                  "Number of workload preemption units being preempted. A single preemption unit can be all pods in "
                  "a pod group (in case of DisruptionMode=all), or a single pod (in case of DisruptionMode=single)."),
                ["preemptor"], buckets=exponential_buckets(1, 2, 11), registry=r)
            self.preemption_pdb_violations = Counter(
                "scheduler_preemption_pdb_violations",
                h("scheduler_preemption_pdb_violations",
                  "Total number of pod disruption budget violations caused by preemption."),
                ["preemptor"], registry=r)
            self.preemption_evaluation_duration = Histogram(
                "scheduler_preemption_evaluation_duration_seconds",
                h("scheduler_preemption_evaluation_duration_seconds",
                  "Duration in seconds for identifying the target preemption victims."),
                ["preemptor", "result"], buckets=exponential_buckets(0.001, 2, 16), registry=r)
            self.preemption_execution_duration = Histogram(
                "scheduler_preemption_execution_duration_seconds",
                h("scheduler_preemption_execution_duration_seconds",
                  "Duration in seconds for preempting the target preemption victims. With async preemption "
                  "enabled, preemption execution does not block the scheduling of other pods."),
                ["preemptor", "result"], buckets=exponential_buckets(0.001, 2, 16), registry=r)
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            h("scheduler_preemption_attempts", "Total preemption attempts in the cluster till now"), registry=r)
        pending_help = ("Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
                        "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
                        f"{'unschedulableEntities' if self.features.at_least(1, 37) else 'unschedulablePods'} "
                        "that the scheduler attempted to schedule and failed; 'gated' is the number of "
                        "unschedulable pods that the scheduler never attempted to schedule because they are gated")
        if self.features.at_least(1, 37):
            pending_help += ("; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' means "
                             "number of pods in pendingPodGroupPods")
        self.pending_pods = Gauge(
            "scheduler_pending_pods", h("scheduler_pending_pods", pending_help + "."), ["queue"], registry=r)
        self.queued_entities: Gauge | None = None
        """``queued_entities{queue,type}`` (1.37+; None before): pods count as ``type="pod"``."""
        if self.features.at_least(1, 37):
            self.queued_entities = Gauge(
                "scheduler_queued_entities",
                h("scheduler_queued_entities",
                  "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods "
                  "that are not members of any podgroup) by the queue type. 'active' means number of entities in "
                  "activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' means number of "
                  "entities in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' "
                  "is the number of unschedulable entities that the scheduler never attempted to schedule because "
                  "they are gated."), ["queue", "type"], registry=r)
        self.podgroup_schedule_attempts: Counter | None = None
        self.podgroup_scheduling_latency: Histogram | None = None
        self.podgroup_scheduling_algorithm_latency: Histogram | None = None
        if self.features.enabled("GenericWorkload"):  # upstream metrics.go L238-243: GenericWorkload only
            self.podgroup_schedule_attempts = Counter(
                "scheduler_podgroup_schedule_attempts",
                h("scheduler_podgroup_schedule_attempts",
                  "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group "
                  "could not be scheduled, while 'error' means an internal scheduler problem."),
                ["result", "profile"], registry=r)
            self.podgroup_scheduling_latency = Histogram(
                "scheduler_podgroup_scheduling_attempt_duration_seconds",
                h("scheduler_podgroup_scheduling_attempt_duration_seconds",
                  "Pod group scheduling attempt latency in seconds"),
                ["result", "profile"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
            self.podgroup_scheduling_algorithm_latency = Histogram(
                "scheduler_podgroup_scheduling_algorithm_duration_seconds",
                h("scheduler_podgroup_scheduling_algorithm_duration_seconds",
                  "Pod group scheduling algorithm latency in seconds"),
                buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            h("scheduler_pod_scheduling_sli_duration_seconds",
              "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
              "might involve multiple scheduling attempts."),
            ["attempts"], buckets=exponential_buckets(0.01, 2, 20), registry=r)
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            h("scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod."),
            buckets=exponential_buckets(1, 2, 5), registry=r)
        self.pod_scheduled_after_flush: Counter | None = None
        """``pod_scheduled_after_flush_total`` (1.36+; None before)."""
        if self.features.at_least(1, 36):
            pool = "unschedulableEntities" if self.features.at_least(1, 37) else "unschedulablePods"
            self.pod_scheduled_after_flush = Counter(
                "scheduler_pod_scheduled_after_flush",
                h("scheduler_pod_scheduled_after_flush",
                  f"Number of pods that were successfully scheduled after being flushed from {pool} due to "
                  "timeout. This metric helps detect potential queueing hint misconfigurations or event handling "
                  "issues."), registry=r)
        self.framework_extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            h("scheduler_framework_extension_point_duration_seconds",
              "Latency for running all plugins of a specific extension point."),
            ["extension_point", "status", "profile"], buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        self.plugin_execution_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            h("scheduler_plugin_execution_duration_seconds",
              "Duration for running a plugin at a specific extension point."),
            ["plugin", "extension_point", "status"], buckets=exponential_buckets(0.00001, 1.5, 20), registry=r)
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods",
            h("scheduler_queue_incoming_pods", "Number of pods added to scheduling queues by event and queue type."),
            ["queue", "event"], registry=r)
        self.queue_incoming_entities: Counter | None = None
        """``queue_incoming_entities_total{queue,event,type}`` (1.37+; None before)."""
        if self.features.at_least(1, 37):
            self.queue_incoming_entities = Counter(
                "scheduler_queue_incoming_entities",
                h("scheduler_queue_incoming_entities",
                  "Number of scheduling entities added to scheduling queues by event, queue type, and entity type. "
                  "Entity types are either 'pod' (for individual pods that are not members of any podgroup) or "
                  "'podgroup'."), ["queue", "event", "type"], registry=r)
        self.permit_wait_duration = Histogram(
            "scheduler_permit_wait_duration_seconds",
            h("scheduler_permit_wait_duration_seconds", "Duration of waiting on permit."),
            ["result"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.cache_size = Gauge(
            "scheduler_cache_size",
            h("scheduler_cache_size", "Number of nodes, pods, and assumed (bound) pods in the scheduler cache."),
            ["type"], registry=r)
        self.unschedulable_reasons = Gauge(
            "scheduler_unschedulable_pods",
            h("scheduler_unschedulable_pods",
              "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for "
              "all plugins that caused it to not schedule and so this metric have meaning only when broken down "
              "by plugin."), ["plugin", "profile"], registry=r)
        # TopologyAwareWorkloadScheduling only (upstream metrics.go L250-256, L672-694)
        self.generated_placements: Counter | None = None
        self.placement_evaluations: Counter | None = None
        self.placement_evaluation_duration: Histogram | None = None
        if self.features.enabled("TopologyAwareWorkloadScheduling"):
            self.generated_placements = Counter(
                "scheduler_generated_placements",
                h("scheduler_generated_placements", "Number of candidate placements generated when scheduling pod "
                                                    "groups."), ["profile"], registry=r)
            self.placement_evaluations = Counter(
                "scheduler_placement_evaluations",
                h("scheduler_placement_evaluations",
                  "Number of candidate placements evaluated when scheduling pod groups, by result. 'feasible' means "
                  "the pod group fit into the placement, while 'infeasible' means it did not."),
                ["result", "profile"], registry=r)
            self.placement_evaluation_duration = Histogram(
                "scheduler_placement_evaluation_duration_seconds",
                h("scheduler_placement_evaluation_duration_seconds",
                  "Latency in seconds of evaluating a single candidate placement when scheduling pod groups, by "
                  "result. 'feasible' means the pod group fit into the placement, while 'infeasible' means it did "
                  "not."), ["result", "profile"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.leader_election_master_status = Gauge(
            "leader_election_master_status",
            h("leader_election_master_status",
              "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
              "master. 'name' is the string used to identify the lease. Please make sure to group by name."),
            ["name"], registry=r)
        self.leader_election_slowpath = Counter(
            "leader_election_slowpath",
            h("leader_election_slowpath",
              "Total number of slow path exercised in renewing leader leases. 'name' is the string used to "
              "identify the lease. Please make sure to group by name."), ["name"], registry=r)
        self.queues = QUEUES_137 if self.features.at_least(1, 37) else QUEUES
        for q in self.queues:
            self.pending_pods.labels(queue=q).set(0)
        self._incoming_seen: dict[tuple[str, str], int] = {}
        self._entities_seen: dict[tuple[str, str], int] = {}
        self._after_flush_seen = 0
        self._entity_queues_seen: set[str] = set()
        self._entity_series_seen: set[tuple[str, str]] = set()
        self._unschedulable_labels: set[tuple[str, str]] = set()
        self._ep_children: dict[tuple[str, str, str], Any] = {}
        self._plugin_children: dict[tuple[str, str, str], Any] = {}
        # labelled children of the per-attempt metrics, looked up once per label set (``labels()``
        # takes a lock and builds a tuple per call; these series are never removed)
        self._attempt_children: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._sli_children: dict[str, Any] = {}

    # ───────────────────────────── attempts ─────────────────────────────

    def observe_attempt(self, attempt: Any, duration_s: float, profile: str, *, pod_attempts: int | None = None,
                        since_first_attempt_s: float | None = None) -> None:
        """One scheduling attempt (``metric_recorder``'s ``PodScheduled`` / ``PodUnschedulable`` /
        ``PodScheduleError``).

        ``attempt``: a :class:`kubesched.scheduler.Attempt` (its ``result`` is ``scheduled``,
        ``unschedulable``, ``error``; ``skipped`` attempts are not counted, as upstream's
        ``skipPodSchedule`` path). ``duration_s``: seconds from the start of the scheduling
        cycle to the end of binding (or to the failure). For a scheduled pod, ``pod_attempts``
        and ``since_first_attempt_s`` (the pod's ``attempts`` and the time since its
        ``initialAttemptTimestamp``) feed ``pod_scheduling_attempts`` and
        ``pod_scheduling_sli_duration_seconds{attempts}``.
        """
        result = attempt.result
        if result not in ("scheduled", "unschedulable", "error"):
            return
        children = self._attempt_children.get((result, profile))
        if children is None:
            children = self._attempt_children[(result, profile)] = (
                self.schedule_attempts.labels(result=result, profile=profile),
                self.scheduling_latency.labels(result=result, profile=profile))
        children[0].inc()
        children[1].observe(duration_s)
        if result == "scheduled" and pod_attempts is not None:
            self.pod_scheduling_attempts.observe(pod_attempts)
            if since_first_attempt_s is not None:
                label = attempts_label(pod_attempts)
                sli = self._sli_children.get(label)
                if sli is None:
                    sli = self._sli_children[label] = self.pod_scheduling_sli_duration.labels(attempts=label)
                sli.observe(since_first_attempt_s)

    def observe_algorithm(self, duration_s: float) -> None:
        """``scheduling_algorithm_duration_seconds`` (``SchedulePod`` only)."""
        self.scheduling_algorithm_latency.observe(duration_s)

    def observe_extension_point(self, extension_point: str, status: str, profile: str, duration_s: float) -> None:
        """``framework_extension_point_duration_seconds`` (``status``: the Status code name, e.g.
        ``Success``, ``Unschedulable``)."""
        key = (extension_point, status, profile)
        child = self._ep_children.get(key)
        if child is None:  # labels() takes a lock and builds a tuple: resolve each series once
            child = self._ep_children[key] = self.framework_extension_point_duration.labels(*key)
        child.observe(duration_s)

    def observe_plugin(self, plugin: str, extension_point: str, status: str, duration_s: float) -> None:
        """``plugin_execution_duration_seconds`` (upstream samples 10 % of cycles)."""
        key = (plugin, extension_point, status)
        child = self._plugin_children.get(key)
        if child is None:
            child = self._plugin_children[key] = self.plugin_execution_duration.labels(*key)
        child.observe(duration_s)

    def observe_preemption_attempt(self) -> None:
        """``preemption_attempts_total``: one DefaultPreemption PostFilter run."""
        self.preemption_attempts.inc()

    def observe_preemption_victims(self, victims: int) -> None:
        """``preemption_victims``: a preemption evicted ``victims`` pods (upstream ``prepareCandidate``)."""
        self.preemption_victims.observe(victims)

    def observe_workload_preemption_attempt(self, result: str) -> None:
        """``workload_preemption_attempts_total{result}``: one DefaultPreemption PodGroupPostFilter
        run, ``result`` its status code name."""
        if self.workload_preemption_attempts is not None:
            self.workload_preemption_attempts.labels(result=result).inc()

    def observe_workload_preemption_victims(self, victims: int) -> None:
        """``workload_preemption_victims``: a pod-group preemption evicts ``victims`` pods."""
        if self.workload_preemption_victims is not None:
            self.workload_preemption_victims.observe(victims)

    def observe_preemption_workload_disruptions(self, preemptor: str, units: int) -> None:
        """``preemption_workload_disruptions{preemptor}``: group victim units disrupted."""
        if self.preemption_workload_disruptions is not None:
            self.preemption_workload_disruptions.labels(preemptor=preemptor).observe(units)

    def observe_preemption_pdb_violations(self, preemptor: str, violations: int) -> None:
        """``preemption_pdb_violations_total{preemptor}``."""
        if self.preemption_pdb_violations is not None:
            self.preemption_pdb_violations.labels(preemptor=preemptor).inc(violations)

    def observe_preemption_evaluation(self, preemptor: str, result: str, duration_s: float) -> None:
        """``preemption_evaluation_duration_seconds{preemptor,result}`` (``result``: status code name)."""
        if self.preemption_evaluation_duration is not None:
            self.preemption_evaluation_duration.labels(preemptor=preemptor, result=result).observe(duration_s)

    def observe_preemption_execution(self, preemptor: str, result: str, duration_s: float) -> None:
        """``preemption_execution_duration_seconds{preemptor,result}`` (``result``: success/error)."""
        if self.preemption_execution_duration is not None:
            self.preemption_execution_duration.labels(preemptor=preemptor, result=result).observe(duration_s)

    def observe_permit_wait(self, result: str, duration_s: float) -> None:
        """``permit_wait_duration_seconds{result}`` (``Success``/``Unschedulable``/…)."""
        self.permit_wait_duration.labels(result=result).observe(duration_s)

    def observe_pod_group_attempt(self, result: str, profile: str, duration_s: float) -> None:
        """``podgroup_schedule_attempts_total`` / ``podgroup_scheduling_attempt_duration_seconds``
        {result = scheduled | unschedulable | waiting_on_preemption | error, profile} (upstream
        profile_metrics.go ``PodGroupScheduled`` … ``PodGroupScheduleError``)."""
        if self.podgroup_schedule_attempts is not None and self.podgroup_scheduling_latency is not None:
            self.podgroup_schedule_attempts.labels(result=result, profile=profile).inc()
            self.podgroup_scheduling_latency.labels(result=result, profile=profile).observe(duration_s)

    def observe_pod_group_algorithm(self, duration_s: float) -> None:
        """``podgroup_scheduling_algorithm_duration_seconds`` (upstream ``PodGroupSchedulingAlgorithmLatency``)."""
        if self.podgroup_scheduling_algorithm_latency is not None:
            self.podgroup_scheduling_algorithm_latency.observe(duration_s)

    # ───────────────────────────── engine state ─────────────────────────────

    def set_pending(self, counts: Mapping[str, int]) -> None:
        """``pending_pods{queue}`` from ``SchedulingQueue.counts()``."""
        for q in self.queues:
            self.pending_pods.labels(queue=q).set(counts.get(q, 0))
        if self.queued_entities is not None:
            # upstream's recorders create a (queue, type) series on its first entity, then keep it
            for q in QUEUES:
                n = counts.get(q, 0)
                if n or q in self._entity_queues_seen:
                    self._entity_queues_seen.add(q)
                    self.queued_entities.labels(queue=q, type="pod").set(n)

    def sync_incoming(self, incoming: Mapping[tuple[str, str], int]) -> None:
        """``queue_incoming_pods_total{queue,event}`` from the queue's cumulative
        ``incoming`` map (only the increase since the last call is added)."""
        for (queue, event), n in incoming.items():
            seen = self._incoming_seen.get((queue, event), 0)
            if n > seen:
                self.queue_incoming_pods.labels(queue=queue, event=event).inc(n - seen)
                self._incoming_seen[(queue, event)] = n

    def sync_incoming_entities(self, incoming: Mapping[tuple[str, str], int]) -> None:
        """``queue_incoming_entities_total{queue,event,type="pod"}`` (1.37+) from the queue's
        cumulative ``incoming_entities`` map."""
        if self.queue_incoming_entities is None:
            return
        for (queue, event), n in incoming.items():
            seen = self._entities_seen.get((queue, event), 0)
            if n > seen:
                self.queue_incoming_entities.labels(queue=queue, event=event, type="pod").inc(n - seen)
                self._entities_seen[(queue, event)] = n

    def sync_scheduled_after_flush(self, total: int) -> None:
        """``pod_scheduled_after_flush_total`` (1.36+) from the queue's cumulative count."""
        if self.pod_scheduled_after_flush is not None and total > self._after_flush_seen:
            self.pod_scheduled_after_flush.inc(total - self._after_flush_seen)
            self._after_flush_seen = total

    def set_unschedulable(self, counts: Mapping[tuple[str, str], int]) -> None:
        """``unschedulable_pods{plugin,profile}``: pods parked in unschedulablePods per rejecting
        plugin; labels that disappear go back to 0."""
        for key in self._unschedulable_labels - set(counts):
            self.unschedulable_reasons.labels(plugin=key[0], profile=key[1]).set(0)
        for (plugin, profile), n in counts.items():
            self.unschedulable_reasons.labels(plugin=plugin, profile=profile).set(n)
        self._unschedulable_labels |= set(counts)

    def update_from(self, scheduler: Any) -> None:
        """Refresh the state gauges from a :class:`kubesched.scheduler.Scheduler` (call it on the
        event loop thread that owns the scheduler, e.g. right before serving ``/metrics``)."""
        queue = scheduler.queue
        self.set_pending(queue.counts())
        entity_counts = getattr(queue, "entity_counts", None)
        if self.queued_entities is not None and callable(entity_counts) and scheduler.pod_group_manager is not None:
            # GenericWorkload: queued_entities counts a pod group as one entity of type "podgroup"
            for (q, typ), n in entity_counts().items():
                if n or (q, typ) in self._entity_series_seen or (typ == "pod" and q in self._entity_queues_seen):
                    self._entity_series_seen.add((q, typ))
                    self.queued_entities.labels(queue=q, type=typ).set(n)
        self.sync_incoming(queue.incoming)
        self.sync_incoming_entities(queue.incoming_entities)
        self.sync_scheduled_after_flush(queue.scheduled_after_flush)
        per_plugin: dict[tuple[str, str], int] = {}
        for qpi in queue.unschedulable.values():
            if qpi.gated or getattr(qpi, "members", None) is not None:  # a pod group entity is only parked gated
                continue
            profile = qpi.pod.spec.scheduler_name or "default-scheduler"
            for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                per_plugin[(plugin, profile)] = per_plugin.get((plugin, profile), 0) + 1
        self.set_unschedulable(per_plugin)
        cache = scheduler.cache
        self.cache_size.labels(type="nodes").set(cache.node_count())
        self.cache_size.labels(type="pods").set(cache.pod_count())
        self.cache_size.labels(type="assumed_pods").set(cache.assumed_count())

    # ───────────────────────────── leader election ─────────────────────────────

    def leader_on(self, name: str) -> None:
        self.leader_election_master_status.labels(name=name).set(1)

    def leader_off(self, name: str) -> None:
        self.leader_election_master_status.labels(name=name).set(0)

    def slowpath_exercised(self, name: str) -> None:
        """The leader renewed through GET + PUT (its optimistic PUT failed)."""
        self.leader_election_slowpath.labels(name=name).inc()

    # ───────────────────────────── topology-aware placement ─────────────────────────────

    def observe_generated_placements(self, profile: str, count: int) -> None:
        """``generated_placements_total{profile}`` += ``count`` (upstream ``RecordGeneratedPlacements``,
        after PlacementGenerate succeeded; schedule_one_podgroup.go L989). A no-op without
        TopologyAwareWorkloadScheduling (the metric is not registered)."""
        if self.generated_placements is not None:
            self.generated_placements.labels(profile=profile).inc(count)

    def observe_placement_evaluation(self, result: str, profile: str, duration_s: float) -> None:
        """``placement_evaluations_total`` / ``placement_evaluation_duration_seconds`` {result =
        feasible | infeasible, profile}: one placement's dry run (upstream ``ObservePlacementEvaluation``,
        schedule_one_podgroup.go L1027-1036; not for an Error, which aborts the cycle)."""
        if self.placement_evaluations is not None and self.placement_evaluation_duration is not None:
            self.placement_evaluations.labels(result=result, profile=profile).inc()
            self.placement_evaluation_duration.labels(result=result, profile=profile).observe(duration_s)

    # ───────────────────────────── exposition ─────────────────────────────

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format (version 0.0.4)."""
        return prometheus_client.generate_latest(self.registry)


# ───────────────────────────── /metrics/resources ─────────────────────────────


def pod_limits(pod: Any) -> dict[str, int]:
    """Effective limits of a pod (``resourcehelper.PodLimits``) as canonical ints (cpu in
    millicores, memory/storage in bytes): regular containers and sidecars summed, max'ed with
    each init container's peak; ``spec.overhead`` added to the resources that have a limit."""
    from kubesched.api.resources import resource_list_to_ints

    def add(into: dict[str, int], rl: Mapping[str, int]) -> None:
        for k, v in rl.items():
            into[k] = into.get(k, 0) + v

    def peak(into: dict[str, int], rl: Mapping[str, int]) -> None:
        for k, v in rl.items():
            if v > into.get(k, 0):
                into[k] = v

    spec = pod.spec
    out: dict[str, int] = {}
    for i, c in enumerate(spec.containers):
        add(out, resource_list_to_ints(c.resources.limits, f"spec.containers[{i}].resources.limits"))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for i, c in enumerate(spec.init_containers):
        lim = resource_list_to_ints(c.resources.limits, f"spec.initContainers[{i}].resources.limits")
        if c.restart_policy == "Always":
            add(out, lim)
            add(sidecars, lim)
            peak(init_peak, sidecars)
        else:
            combined = dict(lim)
            add(combined, sidecars)
            peak(init_peak, combined)
    peak(out, init_peak)
    if spec.overhead and out:
        over = resource_list_to_ints(spec.overhead, "spec.overhead")
        add(out, {k: v for k, v in over.items() if k in out})
    return out


def _unit(resource: str) -> str:
    if resource == "cpu":
        return "cores"
    if resource in ("memory", "storage", "ephemeral-storage") or resource.startswith("hugepages-"):
        return "bytes"
    if resource.startswith("attachable-volumes-"):
        return "integer"
    return ""


def pod_resource_metrics(pods: Iterable[Any]) -> bytes:
    """``/metrics/resources`` (``pkg/scheduler/metrics/resources/resources.go``): a
    ``kube_pod_resource_request`` and ``kube_pod_resource_limit`` gauge per pod and resource, labels
    ``namespace, pod, node, scheduler, priority, resource, unit``; cpu in cores, zero values and
    terminal pods (bound and Succeeded/Failed) left out. ``pods``: kubesched ``Pod`` Structs."""
    from prometheus_client.core import GaugeMetricFamily
    from prometheus_client.registry import Collector

    from kubesched.api.resources import pod_requests

    labels = ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"]
    req = GaugeMetricFamily("kube_pod_resource_request",
                            "Resources requested by workloads on the cluster, broken down by pod.", labels=labels)
    lim = GaugeMetricFamily("kube_pod_resource_limit",
                            "Resources limit for workloads on the cluster, broken down by pod.", labels=labels)
    for pod in pods:
        if pod.spec.node_name and pod.status.phase in ("Succeeded", "Failed"):
            continue
        prio = "" if pod.spec.priority is None else str(pod.spec.priority)
        meta = pod.metadata
        for fam, amounts in ((req, pod_requests(pod)), (lim, pod_limits(pod))):
            for name in sorted(amounts):
                v = amounts[name]
                if v == 0:
                    continue
                value = v / 1000 if name == "cpu" else float(v)
                fam.add_metric([meta.namespace, meta.name, pod.spec.node_name or "", pod.spec.scheduler_name or "",
                                prio, name, _unit(name)], value)

    class _Once(Collector):
        def collect(self) -> Any:
            return [req, lim]

    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Once())
    return prometheus_client.generate_latest(reg)
