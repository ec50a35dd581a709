"""``kubesched run`` as a subprocess against the box: its HTTPS endpoints, metrics and events as a
cluster operator sees them (real TLS and HTTP on 127.0.0.1, ephemeral ports)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import ssl
import sys
from pathlib import Path

import aiohttp
import pytest
from livehelpers import eventually, node_obj, pod_obj
from prometheus_client.parser import text_string_to_metric_families

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient, load_config

pytestmark = pytest.mark.asyncio

SRC = str(Path(__file__).resolve().parents[2] / "src")
INSECURE = ssl.create_default_context()
INSECURE.check_hostname = False
INSECURE.verify_mode = ssl.CERT_NONE  # the process' own self-signed certificate


async def spawn(kubeconfig: str, log: Path, *args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    fh = open(log, "ab")  # noqa: SIM115, ASYNC230 - the child process owns it
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", kubeconfig, "--secure-port=0",
        "--bind-address=127.0.0.1", "-v=2", *args, stdout=fh, stderr=fh, env=env)


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.get(url, ssl=INSECURE) as r:
        return r.status, await r.text()


def sample(text: str, metric: str, **labels: str) -> float | None:
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return None


async def test_endpoints_metrics_and_events_of_a_running_scheduler(tmp_path: Path) -> None:
    kc = str(tmp_path / "kc")
    log = tmp_path / "log"
    async with start_server(kc, data_dir=tmp_path / "data"):
        api = APIClient(load_config(kc, qps=-1))
        for i in range(2):
            await api.create("/api/v1/nodes", node_obj(f"n{i}", cpu="2"))
        names = [f"p{i}" for i in range(5)]
        for n in names:
            await api.create("/api/v1/namespaces/default/pods", pod_obj(n))
        await api.create("/api/v1/namespaces/default/pods", pod_obj("huge", cpu="64"))
        proc = await spawn(kc, log, "--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms",
                           "--leader-elect-retry-period=500ms",
                           "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
        try:
            port: list[int] = []

            def serving() -> bool:
                m = re.search(r"Serving securely on [^ \"]*?:(\d+)", log.read_text(errors="replace"))
                if m:
                    port[:] = [int(m.group(1))]
                return bool(m)

            await eventually(serving, timeout=60, what="the HTTPS server listening")
            base = f"https://127.0.0.1:{port[0]}"

            async def ready() -> bool:
                return (await get(base + "/readyz"))[0] == 200

            await eventually(ready, timeout=60, what="/readyz 200")
            code, body = await get(base + "/readyz?verbose")
            assert code == 200 and body.splitlines() == [
                "[+]leaderElection ok", "[+]shutdown ok", "[+]sched-handler-sync ok", "readyz check passed"]
            assert await get(base + "/healthz?verbose") == (200, "[+]leaderElection ok\nhealthz check passed\n")
            assert (await get(base + "/configz"))[0] == 403  # not in the always-allow list

            async def all_bound() -> bool:
                pods = {p["metadata"]["name"]: p for p in
                        (await api.list("/api/v1/namespaces/default/pods"))["items"]}
                return all(pods[n]["spec"].get("nodeName") for n in names)

            await eventually(all_bound, timeout=60, what="pods bound")

            async def metrics_caught_up() -> bool:
                code, text = await get(base + "/metrics")
                assert code == 200
                return (sample(text, "scheduler_schedule_attempts_total", result="scheduled",
                               profile="default-scheduler") == 5
                        and (sample(text, "scheduler_schedule_attempts_total", result="unschedulable",
                                    profile="default-scheduler") or 0) >= 1)

            await eventually(metrics_caught_up, timeout=60, what="attempt counters")
            _, text = await get(base + "/metrics")
            assert sample(text, "leader_election_master_status", name="kube-scheduler") == 1
            assert sample(text, "scheduler_pending_pods", queue="unschedulable") == 1
            assert sample(text, "scheduler_pod_scheduling_attempts_count") == 5
            assert sample(text, "scheduler_scheduling_attempt_duration_seconds_count", result="scheduled",
                          profile="default-scheduler") == 5
            # the engine's MetricsRecorder: extension points, algorithm latency, preemption attempts
            ep = "scheduler_framework_extension_point_duration_seconds_count"
            dp = "default-scheduler"
            assert sample(text, ep, extension_point="Bind", status="Success", profile=dp) == 5
            assert sample(text, ep, extension_point="PostBind", status="Success", profile=dp) == 5
            assert (sample(text, ep, extension_point="PostFilter", status="Unschedulable", profile=dp) or 0) >= 1
            prefilter_before = sample(text, ep, extension_point="PreFilter", status="Success", profile=dp) or 0
            assert prefilter_before >= 6
            assert sample(text, ep, extension_point="Filter") is None  # upstream: Filter runs per node, no series
            assert sample(text, "scheduler_scheduling_algorithm_duration_seconds_count") == 5
            assert (sample(text, "scheduler_preemption_attempts_total") or 0) >= 1

            # one more pod: the counters increase
            await api.create("/api/v1/namespaces/default/pods", pod_obj("p5"))

            async def one_more_bind() -> bool:
                _, text = await get(base + "/metrics")
                return sample(text, ep, extension_point="Bind", status="Success", profile=dp) == 6

            await eventually(one_more_bind, timeout=60, what="the sixth Bind observed")
            _, text = await get(base + "/metrics")
            assert (sample(text, ep, extension_point="PreFilter", status="Success", profile=dp) or 0) > prefilter_before
            assert sample(text, ep, extension_point="Reserve", status="Success", profile=dp) == 6
            assert sample(text, "scheduler_scheduling_algorithm_duration_seconds_count") == 6

            async def events_written() -> bool:
                evs = (await api.list("/apis/events.k8s.io/v1/namespaces/default/events"))["items"]
                return sum(e["reason"] == "Scheduled" for e in evs) == 6 and any(
                    e["reason"] == "FailedScheduling" for e in evs)

            await eventually(events_written, timeout=60, what="Scheduled and FailedScheduling events")
            evs = (await api.list("/apis/events.k8s.io/v1/namespaces/default/events"))["items"]
            sched_ev = next(e for e in evs if e["reason"] == "Scheduled" and e["regarding"]["name"] == "p0")
            assert sched_ev["reportingController"] == "default-scheduler"
            assert sched_ev["reportingInstance"].startswith("default-scheduler-")
            assert sched_ev["action"] == "Binding"
            assert re.fullmatch(r"Successfully assigned default/p0 to n[01]", sched_ev["note"])
            lease = await api.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")
            holder = lease["spec"]["holderIdentity"]
            assert re.fullmatch(r".+_[0-9a-f-]{36}", holder)

            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 30) == 0
            lease = await api.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")
            assert lease["spec"].get("holderIdentity", "") == "" and lease["spec"]["leaseDurationSeconds"] == 1
        except BaseException:
            print(log.read_text(errors="replace")[-4000:])
            raise
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await api.close()
