"""The topology-aware placement metrics (upstream pkg/scheduler/metrics/metrics.go L250-256, L672-694,
profile_metrics.go L82-93, v1.37.2): registered only with TopologyAwareWorkloadScheduling, ALPHA."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kubesched.features import FeatureGate
from kubesched.kube.metrics import SchedulerMetrics, exponential_buckets

TAS = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})


def samples(m: SchedulerMetrics) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(m.exposition().decode()) for s in f.samples}


def test_not_registered_without_the_gate() -> None:
    m = SchedulerMetrics(features=FeatureGate(overrides={"GenericWorkload": True}))
    m.observe_generated_placements("default-scheduler", 3)
    m.observe_placement_evaluation("feasible", "default-scheduler", 0.01)
    text = m.exposition().decode()
    assert "placement" not in text


def test_generated_and_evaluated_placements() -> None:
    m = SchedulerMetrics(features=TAS)
    m.observe_generated_placements("default-scheduler", 4)
    m.observe_generated_placements("default-scheduler", 2)
    m.observe_placement_evaluation("feasible", "default-scheduler", 0.003)
    m.observe_placement_evaluation("infeasible", "default-scheduler", 0.0005)
    m.observe_placement_evaluation("infeasible", "default-scheduler", 0.0005)
    got = samples(m)
    assert got[("scheduler_generated_placements_total", (("profile", "default-scheduler"),))] == 6
    assert got[("scheduler_placement_evaluations_total",
                (("profile", "default-scheduler"), ("result", "feasible")))] == 1
    assert got[("scheduler_placement_evaluations_total",
                (("profile", "default-scheduler"), ("result", "infeasible")))] == 2
    assert got[("scheduler_placement_evaluation_duration_seconds_count",
                (("profile", "default-scheduler"), ("result", "infeasible")))] == 2
    bucket = "scheduler_placement_evaluation_duration_seconds_bucket"
    les = sorted({float(dict(k[1])["le"]) for k in got if k[0] == bucket and dict(k[1])["le"] != "+Inf"})
    assert les == exponential_buckets(0.001, 2, 15)


def test_help_texts_are_alpha() -> None:
    text = SchedulerMetrics(features=TAS).exposition().decode()
    assert ("# HELP scheduler_generated_placements_total [ALPHA] Number of candidate placements generated when "
            "scheduling pod groups.") in text
    assert "# HELP scheduler_placement_evaluations_total [ALPHA] Number of candidate placements evaluated" in text
    assert "# HELP scheduler_placement_evaluation_duration_seconds [ALPHA] Latency in seconds of evaluating" in text
