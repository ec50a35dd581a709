"""``CompactCollector`` (the report's sink: one JSON text per pod, encoded as records arrive)
against ``ExplanationCollector`` + ``to_compact_dict`` (the objects it replaces): the same text
for every pod of a run with retries, a preemption and an unschedulable pod, and the same page."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tests.sim.test_explain import cluster, node, pod

from kubesched.cli.report_html import render_report
from kubesched.sim.explain import ExplanationCollector, RawJSON, report_data
from kubesched.sim.explain_compact import CompactCollector
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate


def _runs(tmp_path: Path, objs: list[dict], max_nodes: int) -> tuple[object, dict, object, dict]:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    plain = ExplanationCollector(max_nodes=max_nodes)
    r1 = simulate(load_manifests([str(p)]), on_record=plain, keep_records=False)
    fast = CompactCollector(max_nodes=max_nodes)
    r2 = simulate(load_manifests([str(p)]), on_record=fast, keep_records=False)
    return r1, plain.finish(r1), r2, fast.finish(r2)


def test_same_text_and_page_as_the_objects(tmp_path: Path) -> None:
    objs = cluster() + [node(f"t{i}", "64", "a", taint=True) for i in range(6)] + [
        pod(f"w{i}", "300m") for i in range(5)]
    for max_nodes in (1, 2, 10):
        r1, want, r2, got = _runs(tmp_path, objs, max_nodes)
        assert list(got) == list(want)
        for key, ex in want.items():
            assert isinstance(got[key], RawJSON)
            assert got[key] == json.dumps(ex.to_compact_dict(), separators=(",", ":")), key
        assert json.loads(got["default/big"])["preempted"][0]["victim"] == "default/low2"
        assert json.loads(got["default/huge"])["nodes_omitted"] > 0 or max_nodes >= 9
        page = render_report(report_data(r1, title="t", explanations=want))  # type: ignore[arg-type]
        assert render_report(report_data(r2, title="t", explanations=got)) == page  # type: ignore[arg-type]


def test_history_of_a_pod_attempted_twice(tmp_path: Path) -> None:
    """``big`` is attempted twice (it preempts, then binds): its text carries the first attempt."""
    _, want, _, got = _runs(tmp_path, cluster(), 10)
    hist = json.loads(got["default/big"])["history"]
    assert hist == want["default/big"].history and len(hist) == 1 and hist[0]["attempt"] == 1
