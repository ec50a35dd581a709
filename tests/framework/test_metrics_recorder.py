"""The engine's optional MetricsRecorder (upstream ``FrameworkExtensionPointDuration`` in
``framework/runtime/framework.go``, ``SchedulingAlgorithmLatency`` in ``schedule_one.go``,
``PreemptionAttempts``/``PreemptionVictims``, ``PermitWaitDuration`` in ``WaitOnPermit``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.framework.interface import Code, Status
from kubesched.framework.metrics import MetricsRecorder
from kubesched.framework.runtime import TIMED_EXTENSION_POINTS
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

PROFILE = "default-scheduler"


class Recording:
    """A MetricsRecorder that keeps every call."""

    def __init__(self) -> None:
        self.points: list[tuple[str, str, str]] = []
        self.durations: list[float] = []
        self.algorithm: list[float] = []
        self.preemption_attempts = 0
        self.victims: list[int] = []
        self.permit_waits: list[tuple[str, float]] = []
        self.plugins: list[tuple[str, str, str]] = []

    def observe_extension_point(self, extension_point: str, status: str, profile: str, duration_s: float) -> None:
        self.points.append((extension_point, status, profile))
        self.durations.append(duration_s)

    def observe_plugin(self, plugin: str, extension_point: str, status: str, duration_s: float) -> None:
        assert duration_s >= 0
        self.plugins.append((plugin, extension_point, status))

    def observe_algorithm(self, duration_s: float) -> None:
        self.algorithm.append(duration_s)

    def observe_preemption_attempt(self) -> None:
        self.preemption_attempts += 1

    def observe_preemption_victims(self, victims: int) -> None:
        self.victims.append(victims)

    def observe_permit_wait(self, result: str, duration_s: float) -> None:
        self.permit_waits.append((result, duration_s))


class Waiter:
    name = "Waiter"

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.WAIT), 30.0


class RejectReserve:
    name = "RejectReserve"

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status | None:
        if pod.metadata.name.startswith("r"):
            return Status(Code.UNSCHEDULABLE, ("no room in the plan",))
        return None

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def _setup(plugins: dict[str, Any] | None = None, *, cpu: str = "4",
           nodes: int = 1) -> tuple[Scheduler, ClusterStore, Recording]:
    reg = dict(in_tree_registry())
    reg["Waiter"] = lambda a, h: Waiter()
    reg["RejectReserve"] = lambda a, h: RejectReserve()
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": PROFILE, "plugins": plugins or {}}]})
    rec = Recording()
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, registry=reg, metrics=rec)
    store.scheduler = sched
    for i in range(nodes):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu=cpu, memory="8Gi", pods="10").obj())
    return sched, store, rec


def _one(sched: Scheduler) -> Any:
    a = sched.schedule_one()
    assert a is not None
    return a


def _waiting(handle: Any, uid: str) -> Any:
    wp = handle.get_waiting_pod(uid)
    assert wp is not None
    return wp


def test_scheduling_metrics_implements_the_protocol() -> None:
    from kubesched.kube.metrics import SchedulerMetrics

    assert isinstance(Recording(), MetricsRecorder)
    assert isinstance(SchedulerMetrics(), MetricsRecorder)


def test_a_scheduled_pod_observes_each_extension_point_once_with_success() -> None:
    sched, store, rec = _setup(nodes=2)  # one feasible node skips PreScore/Score, as upstream
    store.add("Pod", MakePod().name("p").uid("p").req(cpu="1").obj())
    a = sched.schedule_one()
    assert a is not None and a.result == "scheduled"
    # v1.35+ (NominatedNodeNameForExpectation on): the binding cycle's RunPreBindPreFlights is an
    # extension point of its own; VolumeBinding and DynamicResources have nothing to do → Skip
    assert rec.points == [(p, "Success", PROFILE) for p in ("PreFilter", "PreScore", "Score", "Reserve", "Permit")] + [
        ("PreBindPreFlight", "Skip", PROFILE)] + [(p, "Success", PROFILE) for p in ("PreBind", "Bind", "PostBind")]
    assert all(d >= 0 for d in rec.durations)
    assert len(rec.algorithm) == 1 and rec.algorithm[0] >= 0
    assert rec.preemption_attempts == 0 and rec.victims == [] and rec.permit_waits == []


def test_an_unschedulable_pod_observes_prefilter_and_postfilter_and_one_preemption_attempt() -> None:
    sched, store, rec = _setup()
    store.add("Pod", MakePod().name("big").uid("big").req(cpu="8").obj())
    a = sched.schedule_one()
    assert a is not None and a.result == "unschedulable"
    # no Filter series (upstream records none: RunFilterPlugins runs per node); no algorithm latency
    assert rec.points == [("PreFilter", "Success", PROFILE), ("PostFilter", "Unschedulable", PROFILE)]
    assert rec.algorithm == []
    assert rec.preemption_attempts == 1 and rec.victims == []


def test_prefilter_rejection_is_labelled_with_its_code() -> None:
    sched, store, rec = _setup()
    # VolumeBinding's PreFilter: the claim does not exist → UnschedulableAndUnresolvable
    store.add("Pod", MakePod().name("nowhere").uid("nowhere").pvc("missing").obj())
    a = sched.schedule_one()
    assert a is not None and a.result == "unschedulable"
    assert rec.points[0] == ("PreFilter", "UnschedulableAndUnresolvable", PROFILE)


def test_preemption_observes_the_victims() -> None:
    sched, store, rec = _setup(cpu="2")
    store.add("Pod", MakePod().name("low").uid("low").priority(0).req(cpu="2").obj())
    assert _one(sched).result == "scheduled"
    store.flush()
    store.add("Pod", MakePod().name("hi").uid("hi").priority(1000).req(cpu="2").obj())
    a = sched.schedule_one()
    assert a is not None and a.result == "unschedulable"
    assert rec.preemption_attempts == 1 and rec.victims == [1]
    assert ("PostFilter", "Success", PROFILE) in rec.points


def test_reserve_rejection_observes_reserve_and_unreserve() -> None:
    sched, store, rec = _setup({"reserve": {"enabled": [{"name": "RejectReserve"}]}})
    store.add("Pod", MakePod().name("r1").uid("r1").req(cpu="1").obj())
    a = sched.schedule_one()
    assert a is not None and a.result == "unschedulable"
    assert [p for p, _, _ in rec.points][-2:] == ["Reserve", "Unreserve"]
    assert rec.points[-2:] == [("Reserve", "Unschedulable", PROFILE), ("Unreserve", "Success", PROFILE)]


def test_permit_wait_is_labelled_wait_and_its_duration_observed_with_the_signal() -> None:
    sched, store, rec = _setup({"permit": {"enabled": [{"name": "Waiter"}]}})
    store.add("Pod", MakePod().name("w1").uid("w1").req(cpu="1").obj())
    store.add("Pod", MakePod().name("w2").uid("w2").req(cpu="1").obj())
    assert _one(sched).result == "waiting"
    assert _one(sched).result == "waiting"
    assert ("Permit", "Wait", PROFILE) in rec.points and rec.permit_waits == []
    handle = sched.profiles[PROFILE].handle
    _waiting(handle, "w1").allow("Waiter")
    _waiting(handle, "w2").reject("Waiter", "no")
    assert [r for r, _ in rec.permit_waits] == ["Success", "Unschedulable"]
    assert all(d >= 0 for _, d in rec.permit_waits)
    assert ("Bind", "Success", PROFILE) in rec.points


def test_without_a_recorder_the_plain_methods_run() -> None:
    sched, store, rec = _setup(nodes=2)
    fw = sched.profiles[PROFILE]
    assert all(m in fw.__dict__ for m in TIMED_EXTENSION_POINTS)
    sched.metrics = None
    assert fw.metrics is None and not any(m in fw.__dict__ for m in TIMED_EXTENSION_POINTS)
    store.add("Pod", MakePod().name("p").uid("p").req(cpu="1").obj())
    assert _one(sched).result == "scheduled"
    assert rec.points == [] and rec.algorithm == []
    sched.metrics = rec  # and back on
    store.add("Pod", MakePod().name("q").uid("q").req(cpu="1").obj())
    assert _one(sched).result == "scheduled"
    assert rec.points[0] == ("PreFilter", "Success", PROFILE) and len(rec.algorithm) == 1


@pytest.mark.parametrize("percent", [0, 100])
def test_plugins_are_timed_one_by_one_only_in_sampled_cycles(monkeypatch: pytest.MonkeyPatch, percent: int) -> None:
    from kubesched.scheduler import schedule_one

    monkeypatch.setattr(schedule_one, "PLUGIN_METRICS_SAMPLE_PERCENT", percent)
    sched, store, rec = _setup({"reserve": {"enabled": [{"name": "RejectReserve"}]}}, nodes=2)
    store.add("Pod", MakePod().name("p").uid("p").req(cpu="1").obj())
    store.add("Pod", MakePod().name("big").uid("big").req(cpu="8").obj())
    assert _one(sched).result == "scheduled"
    assert _one(sched).result == "unschedulable"
    if percent == 0:
        assert rec.plugins == []
        return
    got = set(rec.plugins)
    for want in [("NodeResourcesFit", "PreFilter", "Success"), ("NodeResourcesFit", "Filter", "Success"),
                 ("NodeResourcesFit", "Filter", "Unschedulable"), ("NodeResourcesFit", "PreScore", "Success"),
                 ("NodeResourcesFit", "Score", "Success"), ("RejectReserve", "Reserve", "Success"),
                 ("DefaultBinder", "Bind", "Success"), ("DefaultPreemption", "PostFilter", "Unschedulable")]:
        assert want in got, want
    # the extension-point series are the same as unsampled
    assert ("Filter", "Success", PROFILE) not in rec.points
    assert [p for p, _, _ in rec.points][:9] == ["PreFilter", "PreScore", "Score", "Reserve", "Permit",
                                                  "PreBindPreFlight", "PreBind", "Bind", "PostBind"]


def test_plugin_metrics_sampling_is_seeded_and_apart_from_tie_breaking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream samples ``rand.Intn(100) < pluginMetricsSamplePercent`` per cycle: here drawn from
    the scheduler's own seeded ``sample_rng`` (not the global ``random``), so a seeded run samples
    the same cycles every time, and sampling never moves the tie-breaking RNG."""
    from kubesched.scheduler import schedule_one

    monkeypatch.setattr(schedule_one, "PLUGIN_METRICS_SAMPLE_PERCENT", 50)

    def sampled(metrics: bool) -> tuple[list[bool], dict[str, Any]]:
        sched, store, _ = _setup(nodes=3)
        if not metrics:
            sched.metrics = None
        seen: list[bool] = []
        run = sched.profiles[PROFILE].run_pre_filter_plugins

        def spy(state: Any, *a: Any, **k: Any) -> Any:
            seen.append(state.record_plugin_metrics)
            return run(state, *a, **k)

        monkeypatch.setattr(sched.profiles[PROFILE], "run_pre_filter_plugins", spy)
        for i in range(12):
            store.add("Pod", MakePod().name(f"p{i}").uid(f"p{i}").req(cpu="100m").obj())
            assert _one(sched).result == "scheduled"
        return seen, sched.rng.bit_generator.state

    first, rng_on = sampled(True)
    again, _ = sampled(True)
    _, rng_off = sampled(False)
    assert first == again and True in first and False in first
    assert rng_on == rng_off
