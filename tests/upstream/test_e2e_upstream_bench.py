"""Smoke test of benchmarks/e2e_upstream.py (issue 18 §1): the script keeps running and every
scheduler binds the whole backlog of a tiny cluster. No timing is asserted (the figures are
the script's output, not a test's).

Needs the upstream binaries (``make upstream``); skipped without them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kubesched.testing.upstream import UpstreamNotBuilt, find_binaries

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "e2e_upstream.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    try:
        find_binaries("1.37")
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    spec = importlib.util.spec_from_file_location("kubesched_e2e_upstream_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _rows(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.timeout(600)
def test_every_scheduler_binds_the_backlog_of_each_shape(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """basic (kube-scheduler and kubesched run) and preemption (victims preempted, then
    re-created before the next run): all pods bound, CPU seconds measured."""
    code = bench.main(["--shape", "basic", "--shape", "preemption", "--nodes", "6", "--pods", "4", "--json",
                       "--timeout", "180", "--scheduler", "kube-scheduler:2", "--scheduler", "kubesched"])
    rows = _rows(capsys.readouterr().out)
    assert code == 0
    assert [(r["shape"], r["scheduler"]) for r in rows] == [
        ("basic", "kube-scheduler:2"), ("basic", "kubesched"),
        ("preemption", "kube-scheduler:2"), ("preemption", "kubesched")]
    for r in rows:
        assert r["bound"] == r["pods"] == 4, r
        assert isinstance(r["cpu_s"], float) and r["cpu_s"] > 0, r


def test_shapes_build_valid_backlogs(bench: ModuleType) -> None:
    """Each shape's pending objects name what their pods need (claims, PodGroups) before the pods."""
    for name in bench.SHAPES:
        shape = bench.make_shape(name, nodes=3, pods=5, gang_size=2)
        objs = shape.pending(0)
        pods = [o for o in objs if o["kind"] == "Pod"]
        assert len(pods) == 5, name
        names = {(o["kind"], o["metadata"]["name"]) for o in objs}
        for p in pods:
            for rc in p["spec"].get("resourceClaims", []):
                assert ("ResourceClaim", rc["resourceClaimName"]) in names
            group = (p["spec"].get("schedulingGroup") or {}).get("podGroupName")
            if group:
                assert ("PodGroup", group) in names
        gangs = [o for o in objs if o["kind"] == "PodGroup"]
        assert sum(g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in gangs) == (5 if name == "gang" else 0)


@pytest.mark.timeout(600)
def test_startup_and_client_bench_modes(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """``--startup``: each scheduler started on the fixed objects and stopped, its CPU seconds to
    ``/readyz`` recorded; ``--client-bench``: every binding POST and Scheduled event of kubesched's
    client answered (the pods end up bound, the events written)."""
    code = bench.main(["--shape", "basic", "--nodes", "4", "--startup", "2", "--scheduler", "kube-scheduler:2",
                       "--scheduler", "kubesched"])
    rows = _rows(capsys.readouterr().out)
    assert code == 0
    assert [r["scheduler"] for r in rows] == ["kube-scheduler:2"] * 2 + ["kubesched"] * 2
    assert all(r["mode"] == "startup" and r["cpu_at_ready_s"] > 0 for r in rows), rows
    code = bench.main(["--nodes", "4", "--client-bench", "6", "--inflight", "3", "--scheduler", "kubesched"])
    rows = _rows(capsys.readouterr().out)
    assert code == 0 and len(rows) == 1, rows
    r = rows[0]
    assert (r["mode"], r["requests"], r["events_failed"]) == ("client", 6, 0), r
    assert r["bind_ms_cpu"] > 0 and r["event_ms_cpu"] > 0, r
    # --transport: the binding POSTs through another HTTP stack (the pods end up bound: 201 each)
    code = bench.main(["--nodes", "4", "--client-bench", "6", "--inflight", "3", "--scheduler", "kubesched",
                       "--transport", "http.client-2", "--transport", "pycurl-h2", "--transport", "aiohttp"])
    rows = _rows(capsys.readouterr().out)
    assert code == 0 and [(r["transport"], r["requests"]) for r in rows] == [
        ("http.client-2", 6), ("pycurl-h2", 6), ("aiohttp", 6)], rows
    assert all(r["bind_ms_cpu"] > 0 for r in rows) and rows[0]["event_ms_cpu"] is None, rows
    assert rows[2]["event_ms_cpu"] > 0 and rows[2]["events_failed"] == 0, rows
