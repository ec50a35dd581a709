"""``kubesched simulate`` with scheduler extenders from ``--config`` (a real extender server on
127.0.0.1): the extender filters, scores and binds, and its failures reach the output."""

from __future__ import annotations

from pathlib import Path

from test_simulate import items_by_name, node, pod, run, write

from kubesched.testing.extender_server import ExtenderServer


def _config(tmp_path: Path, url: str, **extra: object) -> Path:
    ext = {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 2, **extra}
    return write(tmp_path, "sched.yaml", [{"apiVersion": "kubescheduler.config.k8s.io/v1",
                                           "kind": "KubeSchedulerConfiguration", "extenders": [ext]}])


def test_simulate_consults_the_extender(tmp_path: Path) -> None:
    manifests = write(tmp_path, "cluster.yaml", [node("a"), node("b"), node("c"), pod("p1"), pod("p2"),
                                                 pod("blocked", nodeSelector={"kubernetes.io/hostname": "a"})])
    srv = ExtenderServer(filter=lambda p, names: ({n for n in names if n != "a"}, {"a": "a is draining"}, {}),
                         prioritize=lambda p, names: {"c": 10} if "c" in names else {})
    with srv:
        cfg = _config(tmp_path, srv.url, bindVerb="bind")
        code, out, err = run("simulate", "-f", str(manifests), "--config", str(cfg), "-o", "yaml")
    assert code == 0, err
    items = items_by_name(out)
    assert items["p1"]["spec"]["nodeName"] == "c" and items["p2"]["spec"]["nodeName"] == "c"
    blocked = items["blocked"]
    assert "nodeName" not in blocked["spec"]
    cond = [c for c in blocked["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert cond["message"].startswith("0/3 nodes are available: 1 a is draining, 2 node(s) didn't match "
                                      "Pod's node affinity/selector.")
    assert sorted(b[1] for b in srv.bound) == ["p1", "p2"]


def test_simulate_extender_down_is_a_scheduler_error(tmp_path: Path) -> None:
    manifests = write(tmp_path, "cluster.yaml", [node("a"), pod("p1")])
    with ExtenderServer() as srv:
        srv.faults["filter"] = 503
        code, out, err = run("simulate", "-f", str(manifests), "--config", str(_config(tmp_path, srv.url)),
                             "-o", "yaml")
    assert code == 0, err
    cond = [c for c in items_by_name(out)["p1"]["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert cond["reason"] == "SchedulerError"
    assert cond["message"] == f"failed filter with extender at URL {srv.url}/filter, code 503"
