"""Pod-group metrics (upstream v1.37.2 pkg/scheduler/metrics: podgroup_schedule_attempts_total,
podgroup_scheduling_attempt_duration_seconds, podgroup_scheduling_algorithm_duration_seconds —
registered only with GenericWorkload, metrics.go L238-243 — and queued_entities{type="podgroup"}),
fed from a real offline Scheduler running a gang."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kubesched.features import FeatureGate
from kubesched.kube.metrics import SchedulerMetrics
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

NAMES = ("scheduler_podgroup_schedule_attempts", "scheduler_podgroup_scheduling_attempt_duration_seconds",
         "scheduler_podgroup_scheduling_algorithm_duration_seconds")


def _families(m: SchedulerMetrics) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(m.exposition().decode())}


def test_registered_only_with_generic_workload() -> None:
    assert not set(NAMES) & set(_families(SchedulerMetrics()))
    assert set(NAMES) <= set(_families(SchedulerMetrics(features=FeatureGate(overrides={"GenericWorkload": True}))))


def _samples(m: SchedulerMetrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    out = {}
    for fam in text_string_to_metric_families(m.exposition().decode()):
        for s in fam.samples:
            if s.name == name:
                out[tuple(sorted(s.labels.items()))] = s.value
    return out


def test_gang_attempt_is_counted_once_per_group() -> None:
    fg = FeatureGate(overrides={"GenericWorkload": True})
    m = SchedulerMetrics(features=fg)
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, features=fg, metrics=m)
    store.scheduler = sched
    for i in range(3):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.put_object("PodGroup", {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                  "metadata": {"name": "pg", "namespace": "default"},
                                  "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}})
    store.flush()
    for i in range(4):
        store.add("Pod", MakePod().name(f"p{i}").uid(f"p{i}").req(cpu="3")
                  .spec(schedulingGroup={"podGroupName": "pg"}).obj())
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert _samples(m, "scheduler_podgroup_schedule_attempts_total") == {
        (("profile", "default-scheduler"), ("result", "unschedulable")): 1.0}
    assert _samples(m, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count") == {(): 1.0}
    m.update_from(sched)
    entities = _samples(m, "scheduler_queued_entities")
    assert entities[(("queue", "backoff"), ("type", "podgroup"))] == 1.0
    assert entities.get((("queue", "backoff"), ("type", "pod")), 0.0) == 0.0  # members are not pods here
    assert _samples(m, "scheduler_pending_pods")[(("queue", "backoff"),)] == 4.0
