"""``kubesched simulate --explain``, ``-o wide``, preemptions in every output, config errors
naming their file, the ``--record-results`` notice — through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def node(name: str, cpu: str, taint: bool = False) -> dict:
    d: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
               "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}
    if taint:
        d["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return d


def pod(name: str, cpu: str, node_name: str | None = None, **spec: object) -> dict:
    d: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}], **spec}}
    if node_name:
        d["spec"]["nodeName"] = node_name
    return d


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump_all([
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        node("n1", "2"), node("n2", "4"), node("n3", "8", taint=True),
        pod("low", "1500m", "n1", priorityClassName="high"), pod("low2", "3", "n2"),
        pod("web", "500m"), pod("big", "2", priorityClassName="high"), pod("huge", "64"),
    ], sort_keys=False))
    return p


def test_explain_prints_filter_and_score_tables(cluster: Path) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "--explain", "default/web", "-o", "table")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "pod default/web — attempt 1 (profile default-scheduler): scheduled on n2"
    assert "3 nodes, 3 evaluated, 2 feasible" in out
    assert "chosen n2 (total " in out and "runner-up n1 (total " in out
    row = next(ln for ln in lines if ln.strip().startswith("n3"))
    assert "rejected" in row and "TaintToleration: node(s) had untolerated taint(s)" in row
    # Score table: header with the plugins and their weights, one row per scored node
    head = next(ln for ln in lines if ln.strip().startswith("RANK"))
    assert "TaintToleration ×3" in head and "NodeResourcesFit ×1" in head
    ranked = [ln.split() for ln in lines if ln.strip()[:1].isdigit() and "→" in ln]
    assert [r[1] for r in ranked] == ["n2", "n1"] and ranked[0][2:3] == ["(chosen)"]
    # a bare pod: NodeAffinity has nothing to score (its PreScore says Skip), so it is named, not shown
    skipped = next(ln for ln in lines if "Score plugins skipped by their PreScore" in ln)
    assert "NodeAffinity" in skipped and "NodeAffinity" not in head and "TaintToleration" not in skipped
    assert not any(ln != ln.rstrip() for ln in lines)  # no padding to a console width


def test_explain_preemptor_victim_and_unschedulable(cluster: Path) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "--explain", "big", "--explain", "default/low2",
                         "--explain", "huge", "-o", "table")
    assert code == 0, err
    assert "earlier attempt 1: unschedulable, nominated to n2" in out
    assert "preempted: default/low2 (priority 0) evicted by default/big (priority 1000) on node n2" in out
    assert "the nominated node n2 was evaluated first" in out
    assert "pod default/low2: preempted" in out
    assert "this pod (priority 0) was evicted by default/big (priority 1000) on node n2" in out
    assert "pod default/huge — attempt 1 (profile default-scheduler): unschedulable" in out
    assert out.count("NodeResourcesFit: Insufficient cpu") == 2


def test_explain_as_json(cluster: Path) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "--explain", "default/web", "-o", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["pod"] == "default/web" and d["selected_node"] == "n2" and d["runner_up"] == "n1"
    n2 = next(n for n in d["nodes"] if n["node"] == "n2")
    assert n2["selected"] and n2["total"] == sum(s["weighted"] for s in n2["scores"])
    code, out, _ = run("simulate", "-f", str(cluster), "--explain", "web", "--explain", "big", "-o", "yaml")
    assert code == 0 and [e["pod"] for e in yaml.safe_load(out)] == ["default/web", "default/big"]


@pytest.mark.parametrize(("arg", "needle"), [
    ("default/nope", 'error: --explain: pod "default/nope" is not in the input'),
    ("default/low", 'error: --explain: pod "default/low" has no scheduling attempt to explain: '
                    'it was already bound to node "n1" in the input'),
    ("a/b/c", "error: --explain: invalid pod 'a/b/c': expected NAMESPACE/NAME or NAME"),
])
def test_explain_bad_pod_is_one_line_exit_2(cluster: Path, arg: str, needle: str) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "--explain", arg, "-o", "table")
    assert code == 2 and err.strip() == needle and "Traceback" not in err


def test_wide_shows_scores_runner_up_and_preemptions(cluster: Path) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "-o", "wide")
    assert code == 0, err
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.strip().startswith("default/")}
    web = rows["default/web"]
    assert web[1] == "n2" and web[3] == "n1" and int(web[2]) > int(web[4])  # score above the runner-up's
    assert rows["default/big"][1:2] == ["n2"] and "default/low2" in rows["default/big"]
    assert rows["default/huge"][1] == "<pending>" and "0/3" in rows["default/huge"]
    assert "# 1 pod(s) preempted (deleted from the output):" in out
    assert "#   default/low2 (priority 0) evicted by default/big (priority 1000) on node n2" in out


def test_table_lists_preemptions(cluster: Path) -> None:
    code, out, _ = run("simulate", "-f", str(cluster), "-o", "table")
    assert code == 0
    assert "#   default/low2 (priority 0) evicted by default/big (priority 1000) on node n2" in out


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_yaml_json_outputs_name_the_evicted_pods(cluster: Path, fmt: str) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "-o", fmt)
    assert code == 0
    doc = yaml.safe_load(out)  # JSON is YAML
    names = {i["metadata"]["name"] for i in doc["items"]}
    assert "low2" not in names  # deleted, as the API server would have it …
    # … but never silently: the summary on stderr says which, by whom, where
    assert "notice: 1 pod(s) preempted (deleted from the output):" in err
    assert "notice:   default/low2 (priority 0) evicted by default/big (priority 1000) on node n2" in err


def test_record_results_with_table_says_it_has_no_effect(cluster: Path) -> None:
    code, out, err = run("simulate", "-f", str(cluster), "-o", "table", "--record-results")
    assert code == 0
    assert "notice: --record-results has no effect with -o table" in err
    code, out, err = run("simulate", "-f", str(cluster), "-o", "yaml", "--record-results")
    assert code == 0 and "--record-results" not in err


def test_config_errors_name_the_config_file(cluster: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "percentageOfNodesToScore: 300\n")
    code, _, err = run("simulate", "-f", str(cluster), "--config", str(cfg))
    assert code == 2
    assert err.startswith(f"error: {cfg}: percentageOfNodesToScore: Invalid value: 300")
    # errors found while building the profiles (unknown plugin) name it too
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n"
                   "      enabled:\n      - name: NoSuchPlugin\n")
    code, _, err = run("simulate", "-f", str(cluster), "--config", str(cfg))
    assert code == 2
    assert err.startswith(f'error: {cfg}: profiles[0].plugins.score.enabled[0].name: plugin "NoSuchPlugin"')
    # YAML syntax errors already carried file:line; not named twice
    cfg.write_text("profiles: [\n")
    code, _, err = run("simulate", "-f", str(cluster), "--config", str(cfg))
    assert code == 2 and err.count(str(cfg)) == 1


def test_plugin_errors_show_the_expected_form(cluster: Path) -> None:
    code, _, err = run("simulate", "-f", str(cluster), "--plugin", "nosuch")
    assert code == 2
    assert err.strip() == ("error: --plugin nosuch: no plugin 'nosuch' in entry-point group 'kubesched.plugins' "
                           "(expected NAME=module:factory, or an entry point name in 'kubesched.plugins')")


def test_explain_gated_pod_says_why_it_was_never_attempted(tmp_path: Path) -> None:
    p = tmp_path / "g.yaml"
    p.write_text(yaml.safe_dump_all([node("n1", "2"), pod("gated", "1", schedulingGates=[{"name": "wait"}])]))
    code, _, err = run("simulate", "-f", str(p), "--explain", "gated", "-o", "table")
    assert code == 2
    assert 'pod "default/gated" has no scheduling attempt to explain: it is gated (spec.schedulingGates: wait)' in err


def test_explain_caps_rows_and_summarises_the_rest(tmp_path: Path) -> None:
    p = tmp_path / "many.yaml"
    docs = [node(f"n{i}", "1") for i in range(6)] + [node(f"big{i}", "8") for i in range(3)] + [pod("p", "2")]
    p.write_text(yaml.safe_dump_all(docs))
    code, out, err = run("simulate", "-f", str(p), "--explain", "p", "--explain-nodes", "2", "-o", "table")
    assert code == 0, err
    assert "9 nodes, 9 evaluated, 3 feasible" in out
    # the chosen node and the runner-up, then the rest counted by reason
    assert "… 7 more" in out and "6 × NodeResourcesFit: Insufficient cpu" in out and "1 × feasible" in out
    code, out, _ = run("simulate", "-f", str(p), "--explain", "p", "--explain-nodes", "0", "-o", "table")
    assert code == 0 and "more" not in out and out.count("Insufficient cpu") == 6


def test_record_results_annotates_the_preemptor_with_its_victims(cluster: Path) -> None:
    code, out, _ = run("simulate", "-f", str(cluster), "-o", "yaml", "--record-results")
    assert code == 0
    items = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"]}
    ann = items["big"]["metadata"]["annotations"]
    assert json.loads(ann["kubesched.io/preempted-pods"]) == [{"pod": "default/low2", "node": "n2", "priority": 0}]
    assert "kubesched.io/preempted-pods" not in (items["web"]["metadata"].get("annotations") or {})
