"""Metric names, labels and buckets as upstream pkg/scheduler/metrics/metrics.go, fed from a real
(offline) Scheduler."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kubesched.kube.metrics import (
    SchedulerMetrics,
    attempts_label,
    exponential_buckets,
    pod_limits,
    pod_resource_metrics,
)
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod


def families(m: SchedulerMetrics) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(m.exposition().decode())}


def buckets(m: SchedulerMetrics, sample_name: str) -> list[float]:
    out = []
    for fam in text_string_to_metric_families(m.exposition().decode()):
        for s in fam.samples:
            if s.name == sample_name and s.labels.get("le") not in (None, "+Inf"):
                out.append(float(s.labels["le"]))
    return sorted(set(out))


def test_exponential_buckets_and_attempts_label() -> None:
    assert exponential_buckets(0.001, 2, 3) == [0.001, 0.002, 0.004]
    assert attempts_label(1) == "1" and attempts_label(14) == "14" and attempts_label(15) == "15+"


def test_names_types_and_no_created_series() -> None:
    m = SchedulerMetrics()
    text = m.exposition().decode()
    expected = {
        "scheduler_schedule_attempts_total": "counter",
        "scheduler_scheduling_attempt_duration_seconds": "histogram",
        "scheduler_pending_pods": "gauge",
        "scheduler_pod_scheduling_sli_duration_seconds": "histogram",
        "scheduler_pod_scheduling_attempts": "histogram",
        "scheduler_framework_extension_point_duration_seconds": "histogram",
        "scheduler_plugin_execution_duration_seconds": "histogram",
        "scheduler_preemption_attempts_total": "counter",
        "scheduler_preemption_victims": "histogram",
        "scheduler_queue_incoming_pods_total": "counter",
        "scheduler_unschedulable_pods": "gauge",
        "leader_election_master_status": "gauge",
    }
    for name, kind in expected.items():
        assert f"# TYPE {name} {kind}" in text, name
    assert "_created" not in text


def test_bucket_layouts_match_upstream() -> None:
    m = SchedulerMetrics()
    m.scheduling_latency.labels(result="scheduled", profile="p").observe(0.1)
    m.pod_scheduling_sli_duration.labels(attempts="1").observe(0.1)
    m.pod_scheduling_attempts.observe(1)
    m.observe_extension_point("PreFilter", "Success", "p", 0.001)
    m.observe_preemption_attempt()
    m.observe_preemption_victims(2)
    m.observe_plugin("NodeAffinity", "Filter", "Success", 0.0001)
    b = buckets(m, "scheduler_scheduling_attempt_duration_seconds_bucket")
    assert len(b) == 15 and b[0] == 0.001 and abs(b[-1] - 16.384) < 1e-9
    b = buckets(m, "scheduler_pod_scheduling_sli_duration_seconds_bucket")
    assert len(b) == 20 and b[0] == 0.01 and abs(b[-1] - 0.01 * 2 ** 19) < 1e-6
    assert buckets(m, "scheduler_pod_scheduling_attempts_bucket") == [1, 2, 4, 8, 16]
    b = buckets(m, "scheduler_framework_extension_point_duration_seconds_bucket")
    assert len(b) == 12 and b[0] == 0.0001
    assert buckets(m, "scheduler_preemption_victims_bucket") == [1, 2, 4, 8, 16, 32, 64]
    b = buckets(m, "scheduler_plugin_execution_duration_seconds_bucket")
    assert len(b) == 20 and b[0] == 0.00001


def sample(m: SchedulerMetrics, metric: str, **labels: str) -> float:
    for fam in text_string_to_metric_families(m.exposition().decode()):
        for s in fam.samples:
            if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise KeyError((metric, labels, m.exposition().decode()))


def test_fed_from_a_scheduler() -> None:
    store = ClusterStore(keep_events=False)
    sched = Scheduler(client=store, lister=store)
    store.scheduler = sched
    m = SchedulerMetrics()
    sched.on_attempt = lambda a: m.observe_attempt(a, 0.002, "default-scheduler", pod_attempts=1,
                                                    since_first_attempt_s=0.05)
    store.add("Node", MakeNode().name("n1").capacity(cpu="2", memory="4Gi", pods="10").obj())
    store.add("Pod", MakePod().name("fits").namespace("ns").req(cpu="1").obj())
    store.add("Pod", MakePod().name("too-big").namespace("ns").req(cpu="8").obj())
    while sched.schedule_one() is not None:
        pass
    m.update_from(sched)
    assert sample(m, "scheduler_schedule_attempts_total", result="scheduled", profile="default-scheduler") == 1
    assert sample(m, "scheduler_schedule_attempts_total", result="unschedulable", profile="default-scheduler") == 1
    assert sample(m, "scheduler_scheduling_attempt_duration_seconds_count", result="scheduled") == 1
    assert sample(m, "scheduler_pod_scheduling_attempts_count") == 1
    assert sample(m, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 1
    assert sample(m, "scheduler_pending_pods", queue="unschedulable") == 1
    assert sample(m, "scheduler_pending_pods", queue="active") == 0
    assert sample(m, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile="default-scheduler") == 1
    assert sample(m, "scheduler_queue_incoming_pods_total", queue="active", event="UnscheduledPodAdd") == 2
    assert sample(m, "scheduler_cache_size", type="nodes") == 1
    m.update_from(sched)  # idempotent: counters only grow by the engine's increase
    assert sample(m, "scheduler_queue_incoming_pods_total", queue="active", event="UnscheduledPodAdd") == 2
    # the unschedulable pod leaves: its plugin gauge returns to 0
    sched.on_pod_delete(sched.queue.unschedulable["ns/too-big"].pod)
    m.update_from(sched)
    assert sample(m, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile="default-scheduler") == 0


def test_leader_status() -> None:
    m = SchedulerMetrics()
    m.leader_on("kube-scheduler")
    assert sample(m, "leader_election_master_status", name="kube-scheduler") == 1
    m.leader_off("kube-scheduler")
    assert sample(m, "leader_election_master_status", name="kube-scheduler") == 0


def test_pod_resource_metrics_as_upstream_resources_collector() -> None:
    import msgspec

    bound = MakePod().name("a").namespace("ns").req(cpu="250m", memory="1Gi").node("n1").obj()
    bound = msgspec.structs.replace(bound, spec=msgspec.structs.replace(bound.spec, priority=7))
    done = MakePod().name("done").namespace("ns").req(cpu="1").node("n1").obj()
    done = msgspec.structs.replace(done, status=msgspec.structs.replace(done.status, phase="Succeeded"))
    pending = MakePod().name("b").namespace("ns").req(cpu="1").obj()
    text = pod_resource_metrics([bound, done, pending]).decode()
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    reqs = {(s.labels["pod"], s.labels["resource"]): (s.value, s.labels) for s in fams["kube_pod_resource_request"].samples}
    assert reqs[("a", "cpu")][0] == 0.25 and reqs[("a", "cpu")][1]["unit"] == "cores"
    assert reqs[("a", "memory")][0] == 2 ** 30 and reqs[("a", "memory")][1]["unit"] == "bytes"
    assert reqs[("a", "cpu")][1]["node"] == "n1" and reqs[("a", "cpu")][1]["priority"] == "7"
    assert reqs[("b", "cpu")][1]["node"] == "" and reqs[("b", "cpu")][1]["priority"] == ""
    assert not any(pod == "done" for pod, _ in reqs)  # terminal pods are left out
    assert "kube_pod_resource_limit" in text
    assert pod_limits(bound) == {}  # no limits set: nothing reported


def test_pod_limits_init_and_sidecars() -> None:
    from kubesched.api.objects import Pod, decode

    pod = decode(Pod, {"spec": {
        "containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
        "initContainers": [{"name": "i", "resources": {"limits": {"cpu": "3"}}},
                           {"name": "s", "restartPolicy": "Always", "resources": {"limits": {"cpu": "500m"}}}],
        "overhead": {"cpu": "100m", "memory": "10Mi"}}})
    # regular 1 + sidecar 0.5 = 1.5 < init peak 3 → 3 cpu; overhead added to both limited resources
    assert pod_limits(pod) == {"cpu": 3100, "memory": 2 ** 30 + 10 * 2 ** 20}


# ───────────────────────────── per emulated release (upstream metrics.go of each release) ─────────────────────────────

def _help(m: SchedulerMetrics, name: str) -> str:
    for line in m.exposition().decode().splitlines():
        if line.startswith(f"# HELP {name} "):
            return line[len(f"# HELP {name} "):]
    raise KeyError(name)


def test_stability_prefixes_follow_the_release() -> None:
    """component-base prefixes HELP with the stability level; 1.36 promoted permit_wait_duration_seconds
    and unschedulable_pods to BETA, 1.37 scheduling_algorithm_duration_seconds and
    plugin_execution_duration_seconds."""
    from kubesched.features import FeatureGate

    m134 = SchedulerMetrics(features=FeatureGate(emulated_version=(1, 34)))
    m136 = SchedulerMetrics(features=FeatureGate(emulated_version=(1, 36)))
    m137 = SchedulerMetrics(features=FeatureGate(emulated_version=(1, 37)))
    assert _help(m134, "scheduler_pending_pods").startswith("[STABLE] Number of pending pods")
    for name, levels in (("scheduler_scheduling_algorithm_duration_seconds", ("ALPHA", "ALPHA", "BETA")),
                         ("scheduler_plugin_execution_duration_seconds", ("ALPHA", "ALPHA", "BETA")),
                         ("scheduler_permit_wait_duration_seconds", ("ALPHA", "BETA", "BETA")),
                         ("scheduler_unschedulable_pods", ("ALPHA", "BETA", "BETA")),
                         ("scheduler_pod_scheduling_sli_duration_seconds", ("BETA", "BETA", "BETA")),
                         ("scheduler_cache_size", ("ALPHA", "ALPHA", "ALPHA")),
                         ("leader_election_master_status", ("ALPHA", "ALPHA", "ALPHA"))):
        got = tuple(_help(m, name).split("]")[0].lstrip("[") for m in (m134, m136, m137))
        assert got == levels, name
    # metrics that appeared later
    text134, text136, text137 = (m.exposition().decode() for m in (m134, m136, m137))
    assert "scheduler_pod_scheduled_after_flush_total" not in text134
    assert "scheduler_pod_scheduled_after_flush_total 0.0" in text136
    assert "unschedulablePods due to timeout" in _help(m136, "scheduler_pod_scheduled_after_flush_total")
    assert "unschedulableEntities due to timeout" in _help(m137, "scheduler_pod_scheduled_after_flush_total")
    assert "queue_incoming_entities" not in text136 and "# TYPE scheduler_queue_incoming_entities_total" in text137
    assert 'scheduler_pending_pods{queue="incomplete"} 0.0' in text137
    assert 'queue="incomplete"' not in text134
    assert "'incomplete' means number of pods in incompletePodGroupPods" in _help(m137, "scheduler_pending_pods")


def test_137_queue_metrics_fed_from_a_scheduler() -> None:
    store = ClusterStore(keep_events=False)
    sched = Scheduler(client=store, lister=store)
    store.scheduler = sched
    m = SchedulerMetrics(features=sched.features)
    store.add("Node", MakeNode().name("n1").capacity(cpu="2", memory="4Gi", pods="10").obj())
    store.add("Pod", MakePod().name("too-big").namespace("ns").req(cpu="8").obj())
    while sched.schedule_one() is not None:
        pass
    m.update_from(sched)
    assert sample(m, "scheduler_queue_incoming_entities_total", queue="active", event="UnscheduledPodAdd",
                  type="pod") == 1
    assert sample(m, "scheduler_queued_entities", queue="unschedulable", type="pod") == 1
    # the pod stays in unschedulablePods past the limit: the leftover flush moves it and marks it
    sched.clock.advance(301)
    sched.queue.flush_unschedulable_leftover()
    m.update_from(sched)
    assert sample(m, "scheduler_queued_entities", queue="unschedulable", type="pod") == 0
    # backoff (1 s) long over: queueAfterBackoff lands in activeQ, so it is an entity count too
    assert sample(m, "scheduler_queue_incoming_pods_total", queue="active", event="UnschedulableTimeout") == 1
    assert sample(m, "scheduler_queue_incoming_entities_total", queue="active", event="UnschedulableTimeout",
                  type="pod") == 1
    # it now fits (a bigger node arrived) and is bound: counted as scheduled after the flush
    store.add("Node", MakeNode().name("n2").capacity(cpu="16", memory="4Gi", pods="10").obj())
    sched.clock.advance(20)
    while sched.schedule_one() is not None:
        pass
    m.update_from(sched)
    assert sample(m, "scheduler_pod_scheduled_after_flush_total") == 1
