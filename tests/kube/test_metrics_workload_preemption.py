"""Workload-aware preemption metrics (v1.37.2 ``pkg/scheduler/metrics/metrics.go`` L619-670):
registered only with GenericWorkload (upstream ``Register``), fed by the engine's optional
recorder methods."""

from __future__ import annotations

from prometheus_client import generate_latest

from kubesched.features import FeatureGate, default_feature_gate
from kubesched.kube.metrics import SchedulerMetrics


def test_registered_only_with_generic_workload() -> None:
    off = SchedulerMetrics(features=default_feature_gate())
    assert off.workload_preemption_attempts is None and off.preemption_evaluation_duration is None
    off.observe_workload_preemption_attempt("Success")  # a no-op without the collectors
    text = generate_latest(off.registry).decode()
    assert "workload_preemption" not in text
    assert "Number of selected preemption victims for preemption initiated by a single pod" in text
    v134 = generate_latest(SchedulerMetrics(features=FeatureGate(emulated_version=(1, 34))).registry).decode()
    assert "# HELP scheduler_preemption_victims [STABLE] Number of selected preemption victims\n" in v134


def test_workload_preemption_series() -> None:
    m = SchedulerMetrics(features=default_feature_gate().with_overrides(GenericWorkload=True))
    m.observe_workload_preemption_attempt("Success")
    m.observe_workload_preemption_attempt("Unschedulable")
    m.observe_workload_preemption_victims(3)
    m.observe_preemption_workload_disruptions("podgroup", 1)
    m.observe_preemption_pdb_violations("pod", 2)
    m.observe_preemption_evaluation("podgroup", "Success", 0.002)
    m.observe_preemption_execution("pod", "success", 0.001)
    text = generate_latest(m.registry).decode()
    assert 'scheduler_workload_preemption_attempts_total{result="Success"} 1.0' in text
    assert 'scheduler_workload_preemption_attempts_total{result="Unschedulable"} 1.0' in text
    assert "scheduler_workload_preemption_victims_count 1.0" in text
    assert 'scheduler_workload_preemption_victims_bucket{le="1024.0"} 1.0' in text
    assert 'scheduler_preemption_workload_disruptions_count{preemptor="podgroup"} 1.0' in text
    assert 'scheduler_preemption_pdb_violations_total{preemptor="pod"} 2.0' in text
    assert 'scheduler_preemption_evaluation_duration_seconds_count{preemptor="podgroup",result="Success"} 1.0' in text
    assert 'scheduler_preemption_execution_duration_seconds_count{preemptor="pod",result="success"} 1.0' in text
    assert "# HELP scheduler_workload_preemption_attempts_total [ALPHA] Total preemption attempts initiated by " \
           "workload (including pod groups) in the cluster till now." in text
