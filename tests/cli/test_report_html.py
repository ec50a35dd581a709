"""``simulate --report OUT.html``: the page is self-contained, and in headless Chromium a click on
a pod shows its decision record; the screenshot is looked at (the heatmap is not blank).

The browser part skips (with the reason) when Chromium or the ``playwright`` package is missing.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.cli.report_html import _json_script, render_replay_report

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str | None:
    for cand in (os.environ.get("KUBESCHED_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium",
                 shutil.which("chromium-browser"), shutil.which("google-chrome"),
                 shutil.which("chromium-headless-shell")):  # Debian: apt install chromium-headless-shell
        if cand and os.path.exists(cand):
            return cand
    return None


def cluster() -> list[dict]:
    def node(name: str, cpu: str, zone: str) -> dict:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
                "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}

    def pod(name: str, cpu: str, node_name: str | None = None, **spec: object) -> dict:
        d: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
                            **spec}}
        if node_name:
            d["spec"]["nodeName"] = node_name
        return d

    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
             "value": 1000},
            node("n1", "2", "a"), node("n2", "4", "b"), node("n3", "4", "b"),
            pod("low", "1500m", "n1", priorityClassName="high"), pod("low2", "3", "n2"),
            pod("full3", "3500m", "n3", priorityClassName="high"),
            pod("web", "500m"), pod("big", "2", priorityClassName="high"), pod("huge", "64"),
            # a long name next to a long message
            pod("analytics-ingest-worker-7d9c8b6f5-x2k4q", "64", nodeSelector={"disk": "nvme"})]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("report")
    f = d / "c.yaml"
    f.write_text(yaml.safe_dump_all(cluster(), sort_keys=False))
    out = d / "out.html"
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "table", "--report", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    return out


def test_page_is_self_contained(report: Path) -> None:
    text = report.read_text()
    # nothing is fetched: no external src/href, no @import, no url() to the network
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.I)
    assert "@import" not in text and not re.search(r"url\(\s*['\"]?(https?:)?//", text)
    assert "default-src 'none'" in text  # the CSP forbids any fetch
    for sid in ("summary", "heatmap", "pending", "zones", "pods", "record", "preemptions"):
        assert f'id="{sid}"' in text
    assert 'data-pod="default/web"' in text


def test_embedded_json_cannot_close_its_script() -> None:
    s = _json_script({"m": "</script><script>alert(1)</script><!--"})
    body = s[s.index(">") + 1:s.rindex("</script>")]
    assert "</" not in body and "<!--" not in body


def test_unwritable_report_path_is_one_line_error(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all(cluster()[:3], sort_keys=False))
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "table", "--report",
                                  str(tmp_path / "nodir" / "r.html")], catch_exceptions=False)
    assert r.exit_code == 2 and "error: --report: cannot write" in r.stderr and "Traceback" not in r.stderr


def test_replay_report_draws_the_timeline() -> None:
    samples = [{"time": float(t), "cpu": t / 10, "memory": 0.2, "gpu": 0.0, "pending": 10 - t} for t in range(10)]
    page = render_replay_report({"nodes": 2, "pods_arrived": 10}, samples, "replay")
    assert 'id="timeline"' in page and page.count("<polyline") == 4


def test_click_a_pod_shows_its_decision_record(report: Path, tmp_path: Path) -> None:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium on this machine (set KUBESCHED_CHROMIUM or install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    requests: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(20_000)
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri())
            before = tmp_path / "before.png"
            page.screenshot(path=str(before))
            heat = page.locator("#heatmap svg").first.bounding_box()
            panel = page.locator("#record").bounding_box()
            assert heat is not None and panel is not None
            assert page.locator("rect.tile").count() == 3 * 3  # 3 nodes × cpu, memory, pods
            page.locator('tr.pod[data-pod="default/web"]').click()
            record = page.locator("#record")
            record.get_by_text("decision record: default/web").wait_for()
            text = record.inner_text()
            assert "Filter" in text and "Score (raw → normalized → weighted)" in text
            assert "(chosen)" in text and "(runner-up)" in text
            assert "TaintToleration" in text and "NodeResourcesFit" in text
            # a preemptor's record shows its victim
            page.locator('tr.pod[data-pod="default/big"]').click()
            record.get_by_text("decision record: default/big").wait_for()
            assert "preempted default/low2 on node n2" in record.inner_text()
            # an unschedulable pod: every node and its reason
            page.locator('tr.pod[data-pod="default/huge"]').click()
            record.get_by_text("decision record: default/huge").wait_for()
            assert record.inner_text().count("NodeResourcesFit: Insufficient cpu") == 3
            # a node tile shows the node's pods
            page.locator('rect.tile[data-node="n2"]').first.click()
            record.get_by_text("node n2 (zone b)").wait_for()
            assert "default/big" in record.inner_text()
            # amounts for people, not bytes and millicores: n2 has 4 cpu (4000m) and 8Gi memory
            node_rows = {r.split("\t")[0]: r.split("\t")[1:] for r in record.locator("tr").all_inner_texts()}
            assert node_rows["cpu"][1] == "4" and node_rows["memory"][1] == "8Gi", node_rows
            # a pod's name stays on one line (its column is not squeezed by the messages)
            long_name = 'tr.pod[data-pod="default/analytics-ingest-worker-7d9c8b6f5-x2k4q"] td'
            lines = page.evaluate("""sel => { const td = document.querySelector(sel);
                const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length; }""",
                                  long_name)
            assert lines == 1
            page.locator('tr.pod[data-pod="default/web"]').click()
            record.get_by_text("decision record: default/web").wait_for()
            after = Path(os.environ.get("KUBESCHED_REPORT_SHOT", tmp_path / "after.png"))
            page.screenshot(path=str(after))
        finally:
            browser.close()
    assert errors == []
    assert requests and all(u.startswith(("file:", "data:")) for u in requests), requests
    image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")
    with image.open(before) as a, image.open(after) as b:
        assert a.size == b.size == (1400, 1000)
        box = (int(heat["x"]), int(heat["y"]), int(heat["x"] + heat["width"]), int(heat["y"] + heat["height"]))
        tiles = a.convert("RGB").crop(box)
        colours = {c for _, c in tiles.getcolors(maxcolors=1 << 16) or []}
        # not blank: several fills, and dark blue for the busiest nodes (n3 cpu 87 %)
        assert len(colours) >= 4
        assert any(b_ > 80 and r < 100 and g < 120 for r, g, b_ in colours)
        pbox = (int(panel["x"]), int(panel["y"]), int(panel["x"] + panel["width"]), int(panel["y"] + 400))
        ink_before = sum(a.convert("L").crop(pbox).histogram()[:128])
        ink_after = sum(b.convert("L").crop(pbox).histogram()[:128])
        assert ink_after > 3 * max(ink_before, 1)  # the record panel filled with the tables


def test_replay_cli_writes_the_report(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    pods = tmp_path / "pods.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,4000,8192,0,\nn2,4000,8192,0,\n")
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                    "deletion_time,scheduled_time\n"
                    + "".join(f"p{i},1000,1024,0,0,,LS,Running,{i * 10},{i * 10 + 100},{i * 10}\n" for i in range(12)))
    out = tmp_path / "replay.html"
    r = CliRunner().invoke(main, ["replay", "alibaba-openb", "--nodes", str(nodes), "--pods", str(pods),
                                  "--report", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    assert 'id="timeline"' in page and page.count("<polyline") == 4 and "pods arrived" in page
