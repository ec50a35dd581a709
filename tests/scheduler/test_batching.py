"""Opportunistic batching in the scheduling cycle against upstream v1.37.2
``framework/runtime/batch.go`` and ``schedule_one.go`` L581-676 (and v1.35.4 / v1.36.3 batch.go).

The property test replays upstream's batching semantics in a plain reference (written here
from batch.go, with its own port of Go's ``container/heap``) on a second, unbatched scheduler
fed the same placements, and compares every decision. Upstream batching is *not* always the
unbatched decision: after a hint the candidate list is rebuilt (cached nodes in heap-internal
order, then the re-scored previous node), so among nodes with equal totals the heap may pop a
different one than a fresh heap over the feasible list would — see
:func:`test_batched_choice_can_differ_from_unbatched_on_ties`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import PodInfo
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

BATCHING_PTS = [{"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}]


def _scheduler(nodes: list[Any], *, batching_config: bool = True, features: FeatureGate | None = None,
               seed: int = 1) -> tuple[Scheduler, ClusterStore]:
    prof: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if batching_config:
        prof["pluginConfig"] = BATCHING_PTS
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [prof]}
    store = ClusterStore()
    sched = Scheduler(decode_config(cfg, features=features), client=store, lister=store, seed=seed, record=True,
                      features=features)
    store.scheduler = sched
    for n in nodes:
        store.add("Node", n)
    return sched, store


def _nodes(cpus: list[int]) -> list[Any]:
    return [MakeNode().name(f"n{i}").capacity(cpu=str(c), memory="8Gi", pods="110").obj() for i, c in enumerate(cpus)]


def _run(sched: Scheduler) -> list[tuple[str, str, str | None]]:
    out = []
    while (a := sched.schedule_one()) is not None:
        out.append((a.pod_key, a.result, a.node))
    return out


# ───────────────────────────── default profile: inert ─────────────────────────────


def test_default_profile_never_uses_a_hint() -> None:
    """§2.7: PodTopologySpread's System default constraints make every pod unsignable."""
    sched, store = _scheduler(_nodes([2, 3, 4, 5, 6, 7]), batching_config=False)
    for j in range(12):
        store.add("Pod", MakePod().name(f"p{j}").req(cpu="1").obj())
    got = _run(sched)
    fw = sched.profiles["default-scheduler"]
    assert fw.batch is not None and fw.batch.batched_pods == 0
    assert fw.batch.attempts["hint_used"] == 0 and fw.batch.attempts["hint_not_used"] == 0
    assert fw.batch.state is None
    assert all(q.pod_signature is None for q in sched.queue._entries.values())
    # the same decisions as without the gate
    ref, ref_store = _scheduler(_nodes([2, 3, 4, 5, 6, 7]), batching_config=False,
                                features=FeatureGate().with_overrides(OpportunisticBatching=False))
    for j in range(12):
        ref_store.add("Pod", MakePod().name(f"p{j}").req(cpu="1").obj())
    assert _run(ref) == got


def test_off_at_134() -> None:
    sched, store = _scheduler(_nodes([2, 3]), features=FeatureGate(emulated_version=(1, 34)))
    assert sched.profiles["default-scheduler"].batch is None
    store.add("Pod", MakePod().name("p").req(cpu="1").obj())
    assert _run(sched)[0][1] == "scheduled"


# ───────────────────────────── the hint path ─────────────────────────────


def test_equal_pods_reuse_the_hint() -> None:
    sched, store = _scheduler(_nodes([2, 3, 4, 5, 6, 7]))
    for j in range(8):
        store.add("Pod", MakePod().name(f"p{j}").req(cpu="1").obj())
    got = _run(sched)
    batch = sched.profiles["default-scheduler"].batch
    assert [r for _, r, _ in got] == ["scheduled"] * 8
    assert batch.attempts["no_hint"] == 1 and batch.attempts["hint_used"] == 7 and batch.batched_pods == 7
    # a hinted pod is decided without scoring and without moving nextStartNodeIndex
    assert sched.sampler.next_start_node_index == 0


def test_hint_is_evaluated_with_one_evaluated_node() -> None:
    sched, store = _scheduler(_nodes([2, 3, 4]))
    store.add("Pod", MakePod().name("a").req(cpu="1").obj())
    store.add("Pod", MakePod().name("b").req(cpu="1").obj())
    sched.schedule_one()
    b = sched.schedule_one()
    assert b.record.evaluated_nodes == 1 and b.record.feasible_nodes == 1
    assert b.record.score == {}


def test_different_pod_gets_no_hint_and_replaces_the_state() -> None:
    sched, store = _scheduler(_nodes([2, 3, 4]))
    store.add("Pod", MakePod().name("a").req(cpu="1").obj())
    store.add("Pod", MakePod().name("b").req(cpu="500m").obj())
    store.add("Pod", MakePod().name("c").req(cpu="500m").obj())
    _run(sched)
    batch = sched.profiles["default-scheduler"].batch
    assert batch.flushes["pod_incompatible"] == 1
    assert batch.attempts["hint_used"] == 1  # c reuses b's state


def test_state_expires_after_500ms_on_the_injected_clock() -> None:
    sched, store = _scheduler(_nodes([2, 3, 4]))
    store.add("Pod", MakePod().name("a").req(cpu="1").obj())
    sched.schedule_one()
    sched.clock.advance(0.5)  # not yet: time.Now().After(creation + 500ms) is strict
    store.add("Pod", MakePod().name("b").req(cpu="1").obj())
    sched.schedule_one()
    batch = sched.profiles["default-scheduler"].batch
    assert batch.attempts["hint_used"] == 1
    # b used the hint, so the state (created with a) is not renewed
    sched.clock.advance(0.001)
    store.add("Pod", MakePod().name("c").req(cpu="1").obj())
    sched.schedule_one()
    assert batch.flushes["expired"] == 1 and batch.attempts["hint_used"] == 1


def test_nominated_pod_bypasses_batching_at_137_only() -> None:
    for version, flushed in (((1, 37), 1), ((1, 36), 0)):
        sched, store = _scheduler(_nodes([2, 3, 4]), features=FeatureGate(emulated_version=version))
        store.add("Pod", MakePod().name("a").req(cpu="1").obj())
        sched.schedule_one()
        store.add("Pod", MakePod().name("b").req(cpu="1").nominated_node_name("n0").obj())
        assert sched.schedule_one().node == "n0"  # the nominated node wins either way
        assert sched.profiles["default-scheduler"].batch.flushes["pod_nominated"] == flushed


def test_failed_cycle_breaks_the_chain() -> None:
    """A failed cycle stores nothing: the next pod's cycle is not the stored one + 1 (pod_skipped)."""
    sched, store = _scheduler(_nodes([2, 3]))
    store.add("Pod", MakePod().name("a").req(cpu="1").obj())
    store.add("Pod", MakePod().name("huge").req(cpu="64").obj())
    store.add("Pod", MakePod().name("b").req(cpu="1").obj())
    got = _run(sched)
    assert [r for _, r, _ in got] == ["scheduled", "unschedulable", "scheduled"]
    batch = sched.profiles["default-scheduler"].batch
    assert batch.flushes["pod_skipped"] == 1 and batch.attempts["hint_used"] == 0


@pytest.mark.parametrize("version", [(1, 35), (1, 36)])
def test_before_137_no_hint_while_the_last_node_still_fits(version: tuple[int, int]) -> None:
    """v1.35.4 / v1.36.3 batch.go: a still-feasible last node flushes (node_not_full); once it is
    full the next cached node is the hint (1.35 signs the pod in the cycle, 1.36 in the queue)."""
    sched, store = _scheduler(_nodes([1, 1, 1, 8]), features=FeatureGate(emulated_version=version))
    for j in range(3):
        store.add("Pod", MakePod().name(f"p{j}").req(cpu="1").obj())
    got = _run(sched)
    batch = sched.profiles["default-scheduler"].batch
    assert got[0][2] == "n3" and batch.flushes["node_not_full"] == 2 and batch.batched_pods == 0
    sched, store = _scheduler(_nodes([1, 1, 1]), features=FeatureGate(emulated_version=version))
    for j in range(3):
        store.add("Pod", MakePod().name(f"p{j}").req(cpu="1").obj())
    assert [r for _, r, _ in _run(sched)] == ["scheduled"] * 3
    batch = sched.profiles["default-scheduler"].batch
    assert batch.batched_pods == 2 and batch.flushes["node_not_full"] == 0
    assert all((q.pod_signature is None) == (version == (1, 35)) for q in sched.queue._entries.values())


def test_batched_choice_can_differ_from_unbatched_on_ties() -> None:
    """Nodes n0..n5 with 2..7 cpus, pods of 1 cpu: at the 4th pod n2 (3 free of 4) and n5 (5 free of
    7) tie at 454. Unbatched, the fresh heap over the feasible list n0..n5 pops n2; batched, the
    rebuilt list (cached nodes in heap order, then the re-scored previous node) pops n5."""
    cpus = [2, 3, 4, 5, 6, 7]
    sched, store = _scheduler(_nodes(cpus))
    ref, ref_store = _scheduler(_nodes(cpus), features=FeatureGate().with_overrides(OpportunisticBatching=False))
    for s in (store, ref_store):
        for j in range(4):
            s.add("Pod", MakePod().name(f"p{j}").req(cpu="1").obj())
    assert [n for _, _, n in _run(sched)] == ["n5", "n4", "n3", "n5"]
    assert [n for _, _, n in _run(ref)] == ["n5", "n4", "n3", "n2"]


# ───────────────────────────── property: upstream's batching semantics ─────────────────────────────


class GoHeap:
    """Go ``container/heap`` (Init, Pop) over entries ``(total, name, raw)``; ``Less``: greater
    total (Randomizer is 0 without extenders)."""

    def __init__(self, items: list[tuple[int, str, dict[str, int]]]) -> None:
        self.h = list(items)
        n = len(self.h)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def _less(self, i: int, j: int) -> bool:
        return self.h[i][0] > self.h[j][0]

    def _down(self, i: int, n: int) -> None:
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                return
            j = j1
            if j1 + 1 < n and self._less(j1 + 1, j1):
                j = j1 + 1
            if not self._less(j, i):
                return
            self.h[i], self.h[j] = self.h[j], self.h[i]
            i = j

    def pop(self) -> tuple[int, str, dict[str, int]]:
        n = len(self.h) - 1
        self.h[0], self.h[n] = self.h[n], self.h[0]
        self._down(0, n)
        return self.h.pop()


@dataclass
class Reference:
    """Upstream's OpportunisticBatch (v1.37.2 batch.go) over an unbatched scheduler's framework."""

    sched: Scheduler
    store: ClusterStore
    heap: GoHeap | None = None
    signature: bytes | None = None
    last: str | None = None
    rescore: bool = True
    """1.37 refreshHintCandidates; 1.35/1.36: a still-feasible last node gives no hint."""
    differs: list[str] = field(default_factory=list)

    def decide(self, pod: Any, signature: bytes | None) -> str | None:
        fw = self.sched.profiles["default-scheduler"]
        table = self.sched.table
        state = CycleState(PodInfo(pod))
        _, pst, _ = fw.run_pre_filter_plugins(state, pod)
        assert pst is None or pst.is_success()

        def passes(name: str, st: CycleState = state) -> bool:
            chunk = fw.run_filter_plugins(st, pod, np.asarray([table.row_of[name]], np.int64))
            return bool(chunk.ok_mask()[0])

        def scored(st: CycleState, names: list[str]) -> list[tuple[int, str, dict[str, int]]]:
            rows = np.asarray([table.row_of[n] for n in names], np.int64)
            assert fw.run_pre_score_plugins(st, pod, rows) is None
            res, err = fw.run_score_plugins(st, pod, rows, keep=True)
            assert err is None
            return [(int(res.total[i]), n, {p: int(r[i]) for p, r in zip(res.plugins, res.raw)})
                    for i, n in enumerate(names)]

        hint = None
        if self.heap is not None and self.h_len() and self.last is not None and signature == self.signature:
            if not self.rescore:
                if not passes(self.last):
                    hint = self.heap.pop()[1]
            elif passes(self.last):  # rescore the previous node against the cached raw scores
                cached = list(self.heap.h)
                names = [n for _, n, _ in cached] + [self.last]
                st2 = state.clone()
                rows = np.asarray([table.row_of[n] for n in names], np.int64)
                assert fw.run_pre_score_plugins(st2, pod, rows) is None
                res, err = fw.run_score_plugins(st2, pod, rows[-1:], keep=True)  # raw Score() of the node
                assert err is None
                fresh = {p: int(r[0]) for p, r in zip(res.plugins, res.raw)}
                raws = [r for _, _, r in cached] + [fresh]
                totals = np.zeros(len(names), np.int64)
                for pl in fw.score_plugins:
                    if pl.name in st2.skip_score_plugins:
                        continue
                    arr = np.asarray([r.get(pl.name, 0) for r in raws], np.int64)
                    if getattr(pl, "normalize_score", None) is not None:
                        pl.normalize_score(st2, pod, arr)
                    totals += arr * fw.score_weights[pl.name]
                self.heap = GoHeap([(int(t), n, r) for t, n, r in zip(totals.tolist(), names, raws)])
                hint = self.heap.pop()[1]
            else:
                hint = self.heap.pop()[1]
        if hint is not None and passes(hint):
            chosen = hint
        else:
            feasible = [table.names[r] for r in table.order().tolist() if passes(table.names[r])]
            if not feasible:
                self.last = None
                return None
            if len(feasible) == 1:
                chosen, self.heap = feasible[0], None
            else:
                heap = GoHeap(scored(state, feasible))
                chosen = heap.pop()[1]
                self.heap, self.signature = (heap, signature) if signature is not None else (None, None)
        if hint == chosen:
            unbatched = self._unbatched(pod)
            if unbatched != chosen:
                self.differs.append(f"{pod.metadata.name}: batched {chosen}, unbatched {unbatched}")
        self.last = chosen
        return chosen

    def h_len(self) -> int:
        return len(self.heap.h) if self.heap is not None else 0

    def _unbatched(self, pod: Any) -> str:
        fw = self.sched.profiles["default-scheduler"]
        table = self.sched.table
        state = CycleState(PodInfo(pod))
        fw.run_pre_filter_plugins(state, pod)
        rows = table.order()
        ok = fw.run_filter_plugins(state, pod, rows).ok_mask()
        feasible = rows[ok]
        if len(feasible) == 1:
            return table.names[int(feasible[0])]
        fw.run_pre_score_plugins(state, pod, feasible)
        res, _ = fw.run_score_plugins(state, pod, feasible, keep=False)
        entries = [(int(t), table.names[int(r)], {}) for t, r in zip(res.total.tolist(), feasible.tolist())]
        return GoHeap(entries).pop()[1]


_node = st.tuples(st.integers(1, 8), st.sampled_from(["2Gi", "4Gi", "8Gi"]), st.booleans())
_pod = st.sampled_from([("500m", "512Mi"), ("1", "1Gi"), ("1", "1Gi"), ("1", "1Gi"), ("2", "256Mi")])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.lists(_node, min_size=1, max_size=10), pods=st.lists(_pod, min_size=1, max_size=14),
       version=st.sampled_from([(1, 37), (1, 36)]))
def test_batched_decisions_follow_upstream_batching(nodes: list[tuple[int, str, bool]],
                                                    pods: list[tuple[str, str]], version: tuple[int, int]) -> None:
    def make_nodes() -> list[Any]:
        out = []
        for i, (cpu, mem, tainted) in enumerate(nodes):
            b = MakeNode().name(f"n{i}").capacity(cpu=str(cpu), memory=mem, pods="110")
            if tainted:
                b.taint("dedicated", "x", "PreferNoSchedule")
            out.append(b.obj())
        return out

    fg = FeatureGate(emulated_version=version)
    sched, store = _scheduler(make_nodes(), features=fg)
    ref_sched, ref_store = _scheduler(make_nodes(), features=fg.with_overrides(OpportunisticBatching=False))
    ref = Reference(ref_sched, ref_store, rescore=version >= (1, 37))
    by_key = {}
    for j, (cpu, mem) in enumerate(pods):
        pod = MakePod().name(f"p{j:02d}").req(cpu=cpu, memory=mem).obj()
        by_key[f"default/p{j:02d}"] = pod
        store.add("Pod", pod)
    fw = sched.profiles["default-scheduler"]
    while (a := sched.schedule_one()) is not None:
        pod = by_key[a.pod_key]
        want = ref.decide(pod, fw.sign_pod(pod))
        assert a.node == want, (a.pod_key, a.result, a.node, want)
        if want is not None:
            ref_store.add("Pod", MakePod().name(pod.metadata.name).req(cpu=pod.spec.containers[0].resources.requests[
                "cpu"], memory=pod.spec.containers[0].resources.requests["memory"]).node(want).obj())
