#!/usr/bin/env python
"""CPU per pod, kube-scheduler vs ``kubesched run``, through one real kube-apiserver (issue 18 §1).

    python benchmarks/e2e_upstream.py --shape basic --repeat 3                 # 5,000 nodes, v1.37.2
    python benchmarks/e2e_upstream.py --shape all --repeat 3 --json > e2e.jsonl
    python benchmarks/e2e_upstream.py --shape basic --version 1.34 --pods 10000
    python benchmarks/e2e_upstream.py --shape spreading --scheduler kube-scheduler:16 \\
        --scheduler 'cmd:/work/old/.venv/bin/python -m kubesched.cli.main run --config {config} \\
        --secure-port=0 --bind-address=127.0.0.1'                             # any scheduler command

Per shape, one etcd + kube-apiserver (:mod:`kubesched.testing.upstream`, ``make upstream``)
gets the shape's fixed objects (``--nodes`` Nodes from scheduler_perf's ``node-default.yaml``:
4 cpu, 32Gi, 110 pods, Ready, plus the shape's labels; PriorityClasses, DeviceClass and one
ResourceSlice per node, pre-bound pods). Then, for each repetition and each scheduler in turn,
on the same state: the shape's pending objects are created (a **backlog**: ``--pods`` pods, and
their ResourceClaims / PodGroups), the scheduler is started (one ``KubeSchedulerConfiguration``
for all: default profile, leader election off, ``clientConnection`` QPS/burst 5000 as
scheduler_perf uses, ``parallelism`` as asked; identity ``system:kube-scheduler`` with upstream's
bootstrap RBAC; ``-v=2``), a watch records when each pending pod is first seen with
``spec.nodeName``, and once all are bound the scheduler's CPU seconds (user + system of its
process, ``/proc/<pid>/stat``: start-up and informer sync included) and its wall time from
spawn to the last bind seen are recorded; the scheduler is stopped and the pending objects
deleted (grace period 0; preemption victims are re-created) before the next run.

Schedulers (``--scheduler``, repeatable; default ``kube-scheduler:16``, ``kube-scheduler:2``,
``kubesched``): ``kube-scheduler[:PARALLELISM]`` is upstream's binary of ``--version``;
``kubesched`` is ``kubesched run`` of this checkout (same interpreter); ``kubesched@DIR`` runs
the ``src`` of another checkout (a before/after in one go); ``cmd:SHELL COMMAND`` any command,
``{kubeconfig}`` and ``{config}`` replaced by paths. kubesched gets ``--emulated-version`` of
``--version`` and the shape's ``--feature-gates``.

Shapes (after scheduler_perf's templates, ``test/integration/scheduler_perf``):

- ``basic``: SchedulingBasic, pods 100m / 500Mi (``pod-default.yaml``).
- ``affinity``: SchedulingPodAffinity, nodes in zone ``zone1``, pods ``color=blue`` with required
  pod affinity to ``color=blue`` over ``topology.kubernetes.io/zone``.
- ``anti-affinity``: SchedulingPodAntiAffinity, pods ``color=green`` with required anti-affinity
  to ``color=green`` over ``kubernetes.io/hostname`` (so ``--pods`` ≤ ``--nodes``).
- ``spreading``: TopologySpreading, nodes over zones ``moon-1..3``, pods with a
  ``DoNotSchedule`` constraint (maxSkew 5, zone, ``color=blue``).
- ``preemption``: PreemptionBasic made to fit one node per victim: 1-cpu nodes each holding one
  pre-bound low-priority pod (900m, priority 0, ``terminationGracePeriodSeconds: 0``); the
  backlog is high-priority pods (1 cpu, priority 10): each one preempts a victim, then binds.
- ``dra``: SchedulingWithResourceClaim: a DeviceClass, one ResourceSlice of 4 devices per node,
  each pod with its own ResourceClaim (``ExactCount`` 1; created with the pod: no
  kube-controller-manager runs to instantiate templates).
- ``gang`` (v1.37 only): PodGroups (``scheduling.k8s.io/v1beta1``, ``gang.minCount`` =
  ``--gang-size``), ``--pods`` members; GenericWorkload, TopologyAwareWorkloadScheduling,
  PodGroupPreemptionPolicy on kube-apiserver and both schedulers, the beta API served.

``--client-bench N --transport T`` (repeatable) measures the binding POSTs alone through other
HTTP stacks, same requests, same ``--inflight``, connections opened before the clock starts:
``apiclient`` (kubesched's ``APIClient`` as it is, the default, events too: libcurl since session 9),
``aiohttp`` (``APIClient`` on aiohttp alone, ``KUBESCHED_HTTP_TRANSPORT=aiohttp``, events too),
``aiohttp-uvloop`` (the same on uvloop), ``pycurl-h2`` / ``pycurl-h1-N`` (``kube/_curl.py``'s libcurl
driver alone: HTTP/2 on one connection / HTTP/1.1 on up to N connections), ``httpx-h2`` (httpx over
HTTP/2 on one connection, kube-apiserver's default protocol),
``http.client-N`` / ``urllib3-N`` (blocking sockets with OpenSSL's own TLS in an N-thread pool
fed from the event loop).

Output: one line (or ``--json`` object) per run, then a summary per shape: median pods per
scheduler-CPU-second and wall time to the last bind per scheduler, and each one's ratio to the
first scheduler. Figures depend on the machine's load (printed); nothing here is a test assertion.
"""

from __future__ import annotations

import argparse
import compileall
import http.client
import itertools
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# this checkout's package, whatever is installed: ``kubesched`` below is this checkout's ``kubesched run``
# (``--client-bench`` children of ``kubesched@DIR`` get DIR's ``src`` through KUBESCHED_BENCH_SRC)
sys.path.insert(0, os.environ.get("KUBESCHED_BENCH_SRC")
                or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
import yaml

from kubesched.testing import upstream  # noqa: E402

NAMESPACE = "e2e"
FILL_NAMESPACE = "e2e-fill"
ZONE = "topology.kubernetes.io/zone"
DRIVER = "gpu.example.com"
PG_API = "/apis/scheduling.k8s.io/v1beta1"
GROUP_GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, "PodGroupPreemptionPolicy": True}
_RUNS = itertools.count()
"""run number: names of pending objects differ between runs (a deletion may still be under way)"""
SHAPES = ("basic", "affinity", "anti-affinity", "spreading", "preemption", "dra", "gang")


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """scheduler_perf's node-default.yaml, named, with ``kubernetes.io/hostname`` (as its node preparer)."""
    cap = {"pods": "110", "cpu": cpu, "memory": "32Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {}, "status": {"capacity": cap, "allocatable": dict(cap),
                                   "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"}}


def pod(name: str, ns: str = NAMESPACE, cpu: str = "100m", memory: str = "500Mi", *,
        labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """scheduler_perf's pod-default.yaml (requests = limits), named, with extra ``spec`` fields."""
    res = {"cpu": cpu, "memory": memory}
    container: dict[str, Any] = {"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                                 "ports": [{"containerPort": 80}],
                                 "resources": {"limits": dict(res), "requests": dict(res)}}
    if "claims" in spec:
        container["resources"]["claims"] = spec.pop("claims")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"containers": [container], **spec}}


def term(key: str, value: str, topology: str) -> dict[str, Any]:
    return {"labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
            "topologyKey": topology}


@dataclass
class Shape:
    """A shape's objects: ``fixed`` (created once per control plane, in order), ``pending(run)``
    (the backlog of one run: pods and what they need, in creation order)."""

    name: str
    fixed: list[dict[str, Any]]
    pending: Callable[[int], list[dict[str, Any]]]
    gates: dict[str, bool] = field(default_factory=dict)
    apiserver_args: list[str] = field(default_factory=list)
    fill: dict[str, str] = field(default_factory=dict)
    """pre-bound pod per node (preemption: victims to re-create after each run), name → node"""


def make_shape(name: str, nodes: int, pods: int, gang_size: int) -> Shape:
    names = [f"node-{i:05d}" for i in range(nodes)]
    if name == "basic":
        return Shape(name, [node(n) for n in names], lambda r: [pod(f"p{r}-{i}") for i in range(pods)])
    if name == "affinity":
        aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term("color", "blue", ZONE)]}}
        return Shape(name, [node(n, labels={ZONE: "zone1"}) for n in names], lambda r: [
            pod(f"p{r}-{i}", labels={"color": "blue"}, affinity=aff) for i in range(pods)])
    if name == "anti-affinity":
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            term("color", "green", "kubernetes.io/hostname")]}}
        return Shape(name, [node(n) for n in names], lambda r: [
            pod(f"p{r}-{i}", labels={"color": "green"}, affinity=anti) for i in range(pods)])
    if name == "spreading":
        tsc = [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}}}]
        return Shape(name, [node(n, labels={ZONE: f"moon-{i % 3 + 1}"}) for i, n in enumerate(names)], lambda r: [
            pod(f"p{r}-{i}", labels={"color": "blue"}, topologySpreadConstraints=tsc) for i in range(pods)])
    if name == "preemption":
        pcs = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for n, v in (("low", 0), ("high", 10))]
        return Shape(name, [*pcs, *(node(n, cpu="1") for n in names)], lambda r: [
            pod(f"p{r}-{i}", cpu="1", priorityClassName="high", terminationGracePeriodSeconds=0)
            for i in range(pods)], fill={f"low-{n}": n for n in names})
    if name == "dra":
        fixed: list[dict[str, Any]] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                        "metadata": {"name": DRIVER}, "spec": {"selectors": [
                                            {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
        for n in names:
            fixed.append(node(n))
            fixed.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpu"},
                          "spec": {"driver": DRIVER, "nodeName": n,
                                   "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": f"gpu-{d}"} for d in range(4)]}})

        def dra_pending(r: int) -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            for i in range(pods):
                claim = f"c{r}-{i}"
                out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": claim, "namespace": NAMESPACE},
                            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                                "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 1}}]}}})
                out.append(pod(f"p{r}-{i}", claims=[{"name": "gpu"}],
                               resourceClaims=[{"name": "gpu", "resourceClaimName": claim}]))
            return out
        return Shape(name, fixed, dra_pending)
    if name == "gang":
        def gang_pending(r: int) -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            for g in range((pods + gang_size - 1) // gang_size):
                group = f"g{r}-{g}"
                members = min(gang_size, pods - g * gang_size)
                out.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                            "metadata": {"name": group, "namespace": NAMESPACE},
                            "spec": {"schedulingPolicy": {"gang": {"minCount": members}}}})
                out += [pod(f"p{r}-{g}-{m}", schedulingGroup={"podGroupName": group}) for m in range(members)]
            return out
        return Shape(name, [node(n) for n in names], gang_pending, gates=dict(GROUP_GATES),
                     apiserver_args=["--runtime-config=scheduling.k8s.io/v1beta1=true"])
    raise SystemExit(f"e2e_upstream.py: unknown shape {name!r}; known: {', '.join(SHAPES)}")


def api_path(obj: dict[str, Any]) -> str:
    """Collection path of ``obj`` (create with POST)."""
    kind, ns = obj["kind"], obj["metadata"].get("namespace")
    plural = {"Node": "nodes", "Pod": "pods", "Namespace": "namespaces", "PriorityClass": "priorityclasses",
              "DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "ResourceClaim": "resourceclaims",
              "PodGroup": "podgroups"}[kind]
    group = obj["apiVersion"]
    base = "/api/v1" if group == "v1" else f"/apis/{group}"
    return f"{base}/namespaces/{ns}/{plural}" if ns else f"{base}/{plural}"


class Client:
    """One keep-alive HTTPS connection (http.client) to the control plane as user kubesched."""

    def __init__(self, cp: upstream.ControlPlane, timeout: float = 60.0) -> None:
        host, port = cp.url.removeprefix("https://").split(":")
        self.conn = http.client.HTTPSConnection(host, int(port), context=cp.ssl_context(), timeout=timeout)
        self.headers = {"Authorization": f"Bearer {cp.tokens['kubesched']}",
                        "Content-Type": "application/json", "Accept": "application/json"}

    def call(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201),
             content_type: str = "application/json") -> Any:
        self.conn.request(method, path, None if body is None else json.dumps(body),
                          {**self.headers, "Content-Type": content_type})
        r = self.conn.getresponse()
        data = r.read()
        if r.status not in ok:
            raise RuntimeError(f"{method} {path}: HTTP {r.status}: {data[:300]!r}")
        return json.loads(data) if data else None


def create_all(cp: upstream.ControlPlane, objs: list[dict[str, Any]], threads: int) -> float:
    """POST ``objs`` from ``threads`` threads, one kind after the other (claims and PodGroups
    exist before their pods are created). Returns the wall time."""
    t0 = time.monotonic()
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objs:  # kinds in the order first seen
        by_kind.setdefault(o["kind"], []).append(o)
    for batch in by_kind.values():
        _post_batch(cp, batch, threads)
    return time.monotonic() - t0


def _post_batch(cp: upstream.ControlPlane, batch: list[dict[str, Any]], threads: int) -> None:
    it = iter(batch)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work() -> None:
        c = Client(cp)
        while not errors:
            with lock:
                o = next(it, None)
            if o is None:
                return
            try:
                c.call("POST", api_path(o), o, ok=(201,))
            except (OSError, RuntimeError, http.client.HTTPException) as e:  # reported below
                errors.append(e)
    ts = [threading.Thread(target=work) for _ in range(min(threads, len(batch)))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


class BindWatch(threading.Thread):
    """Records the first time each pod of ``NAMESPACE`` is seen bound, as a reflector would: list,
    then watch from the list's resourceVersion; when the server ends the watch or sends an
    ERROR, list and watch again (pods found bound by a relist get the relist time)."""

    def __init__(self, cp: upstream.ControlPlane) -> None:
        super().__init__(daemon=True)
        self.cp = cp
        self.bound: dict[str, float] = {}
        self.rewatches = 0
        self.error: str | None = None
        self.stop = threading.Event()
        self.listed = threading.Event()

    def _seen(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if obj["spec"].get("nodeName") and name not in self.bound:
            self.bound[name] = time.monotonic()

    def run(self) -> None:
        base = f"/api/v1/namespaces/{NAMESPACE}/pods"
        while not self.stop.is_set():
            c = Client(self.cp, timeout=600)
            try:
                lst = c.call("GET", base)
            except RuntimeError as e:
                self.error = str(e)
                return
            for obj in lst["items"]:
                self._seen(obj)
            self.listed.set()
            rv = lst["metadata"]["resourceVersion"]
            c.conn.request("GET", f"{base}?watch=1&resourceVersion={rv}&timeoutSeconds=3600", headers=c.headers)
            r = c.conn.getresponse()
            if r.status != 200:
                self.error = f"watch: HTTP {r.status}"
                return
            try:
                while not self.stop.is_set():
                    line = r.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":
                        break
                    self._seen(ev["object"])
            except OSError:  # a read timeout or a dropped connection: list and watch again
                pass
            c.conn.close()
            self.rewatches += 1


def scheduled_events(cp: upstream.ControlPlane) -> int:
    """How many ``Scheduled`` Events (events.k8s.io/v1) ``NAMESPACE`` holds: written by the
    scheduler under test for every pod it bound, unless its recorder dropped them."""
    c = Client(cp, timeout=600)
    try:
        lst = c.call("GET", f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events")
    finally:
        c.conn.close()
    return sum(1 for ev in lst["items"] if ev.get("reason") == "Scheduled")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (/proc/<pid>/stat fields 14, 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and of its live descendants (a ``cmd:`` scheduler runs under a shell)."""
    total = cpu_s(pid)
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        kids = []
    return total + sum(children_cpu_s(int(k)) for k in kids)


def delete_pending(cp: upstream.ControlPlane, shape: Shape, timeout: float = 300) -> None:
    """Delete the run's pods, claims and PodGroups (grace 0) and wait until they are gone."""
    opts = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    paths = [f"/api/v1/namespaces/{NAMESPACE}/pods"]
    if shape.name == "dra":
        paths.append(f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaims")
    if shape.name == "gang":
        paths.append(f"{PG_API}/namespaces/{NAMESPACE}/podgroups")
    deadline = time.monotonic() + timeout
    for p in paths:
        while True:
            c = Client(cp, timeout=timeout)
            try:
                left = c.call("GET", p)["items"]
                if not left:
                    break
                # finalizers nobody removes here (no kube-controller-manager runs): the scheduler's
                # delete-protection of allocated claims
                for o in left:
                    if o["metadata"].get("finalizers"):
                        c.call("PATCH", f"{p}/{o['metadata']['name']}", {"metadata": {"finalizers": None}},
                               content_type="application/merge-patch+json")
                # a large collection can outlast the server's request timeout: it goes on deleting
                c.call("DELETE", p, opts)
            except (OSError, http.client.HTTPException, RuntimeError):
                pass
            finally:
                c.conn.close()
            time.sleep(0.5)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{p}: not empty after {timeout} s")


def refill(cp: upstream.ControlPlane, shape: Shape, threads: int) -> int:
    """Re-create the pre-bound pods the last run preempted; how many."""
    if not shape.fill:
        return 0
    have = {o["metadata"]["name"] for o in Client(cp).call("GET", f"/api/v1/namespaces/{FILL_NAMESPACE}/pods")["items"]}
    missing = [pod(n, FILL_NAMESPACE, cpu="900m", priorityClassName="low", terminationGracePeriodSeconds=0,
                   nodeName=nd) for n, nd in shape.fill.items() if n not in have]
    create_all(cp, missing, threads)
    return len(missing)


def run_one(cp: upstream.ControlPlane, shape: Shape, spec: str, version: str, pods: int, timeout: float,
            threads: int, r: int) -> dict[str, Any]:
    """One run of scheduler ``spec`` on the backlog of repetition ``r``; the figures."""
    t_create = create_all(cp, shape.pending(next(_RUNS)), threads)
    events_before = scheduled_events(cp)
    watch = BindWatch(cp)
    watch.start()
    watch.listed.wait(60)
    config: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                              "clientConnection": {"qps": 5000, "burst": 5000},
                              "leaderElection": {"leaderElect": False}}
    kind, _, arg = spec.partition(":") if spec.startswith(("kube-scheduler", "cmd:")) else spec.partition("@")
    gates_arg = [f"--feature-gates={upstream.format_feature_gates(shape.gates)}"] if shape.gates else []
    ext: subprocess.Popen[bytes] | None = None
    t0 = time.monotonic()
    if kind == "kube-scheduler":
        config["parallelism"] = int(arg or 16)
        proc = cp.start_kube_scheduler(config, feature_gates=shape.gates or None)
        pid, stop = proc.popen.pid, cp.stop_kube_scheduler
        cpu_ready: float | None = cpu_s(pid)
    elif kind == "kubesched":
        args = [*gates_arg, f"--emulated-version={version}"]
        proc = _start_kubesched(cp, config, args, Path(arg) / "src" if arg else None)
        pid, stop = proc.popen.pid, cp.stop_kubesched_run
        cpu_ready = cpu_s(pid)
    else:
        kubeconfig = cp.kubeconfig_for("system:kube-scheduler")
        cfg = cp.workdir / "scheduler-under-test.yaml"
        cfg.write_text(yaml.safe_dump({**config, "clientConnection": {**config["clientConnection"],
                                                                       "kubeconfig": str(kubeconfig)}}))
        cmd = arg.format(kubeconfig=shlex.quote(str(kubeconfig)), config=shlex.quote(str(cfg)))
        log = open(cp.workdir / "scheduler-under-test.log", "ab")  # noqa: SIM115 - closed by the process exit
        ext = subprocess.Popen(cmd, shell=True, stdout=log, stderr=subprocess.STDOUT)
        pid, cpu_ready = ext.pid, None

        def stop() -> int | None:
            assert ext is not None
            for sig in (signal.SIGINT, signal.SIGTERM):  # as Ctrl-C first: a profiler writes its output
                ext.send_signal(sig)
                try:
                    return ext.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
            ext.kill()
            return ext.wait()
    deadline = t0 + timeout
    while len(watch.bound) < pods and time.monotonic() < deadline and watch.error is None:
        time.sleep(0.1)
    cpu = children_cpu_s(pid)
    events_at_last_bind = scheduled_events(cp) - events_before
    stop()
    watch.stop.set()
    bound = len(watch.bound)
    last = max(watch.bound.values(), default=t0)
    first = min(watch.bound.values(), default=t0)
    return {"shape": shape.name, "scheduler": spec, "version": version, "repetition": r, "pods": pods,
            "bound": bound, "cpu_s": round(cpu, 2),
            "cpu_at_ready_s": None if cpu_ready is None else round(cpu_ready, 2),
            "pods_per_cpu_s": round(bound / cpu, 1) if cpu else 0.0,
            "wall_to_last_bind_s": round(last - t0, 2), "first_to_last_bind_s": round(last - first, 2),
            "create_s": round(t_create, 1), "loadavg": [round(x, 2) for x in os.getloadavg()],
            "watch_error": watch.error, "rewatches": watch.rewatches,
            # Scheduled events written by the last bind (the CPU figure's moment) and by the stop
            "events_at_last_bind": events_at_last_bind, "events": scheduled_events(cp) - events_before}


_COMPILED: set[Path] = set()


def _start_kubesched(cp: upstream.ControlPlane, config: dict[str, Any], args: list[str], src: Path | None) -> Any:
    """``kubesched run`` via :meth:`ControlPlane.start_kubesched_run`, or another checkout's ``src``.
    The package is byte-compiled first, as an installed one is: under ``PYTHONDONTWRITEBYTECODE``
    every start would otherwise compile ~480 modules (seconds of CPU the scheduler never pays
    when installed with pip). A ``kubesched run`` that has ``--cert-dir`` gets one, as
    :meth:`ControlPlane.start_kube_scheduler` gives kube-scheduler (both then generate their
    self-signed serving certificate on the first start only)."""
    root = src or Path(upstream.__file__).resolve().parents[1]
    if root not in _COMPILED:
        compileall.compile_dir(str(root), quiet=1)
        _COMPILED.add(root)
    run_cmd = (root if src is None else root / "kubesched") / "cli" / "run_cmd.py"
    if "--cert-dir" in run_cmd.read_text():
        # as ControlPlane gives kube-scheduler: its self-signed serving pair is made once and reused
        args = [*args, f"--cert-dir={cp.workdir / 'kubesched-certs'}"]
    if src is None:
        return cp.start_kubesched_run(config, extra_args=args)
    cfg_path = cp._scheduler_config(config, cp.kubeconfig_for("system:kube-scheduler"), "kubesched-run")
    env = {**os.environ, "PYTHONPATH": str(src)}
    return cp._start_ready("kubesched-run", lambda port: [
        sys.executable, "-m", "kubesched.cli.main", "run", f"--config={cfg_path}", "--bind-address=127.0.0.1",
        f"--secure-port={port}", "-v=2", *args], 60.0, env)


def startup_one(cp: upstream.ControlPlane, shape: Shape, spec: str, version: str) -> dict[str, Any]:
    """Start scheduler ``spec`` on the shape's fixed objects (no backlog), wait for its ``/readyz``
    (informers synced), record its CPU seconds and wall time to that point, stop it."""
    kind, _, arg = spec.partition(":") if spec.startswith("kube-scheduler") else spec.partition("@")
    config: dict[str, Any] = {"clientConnection": {"qps": 5000, "burst": 5000},
                              "leaderElection": {"leaderElect": False}}
    t0 = time.monotonic()
    if kind == "kube-scheduler":
        config["parallelism"] = int(arg or 16)
        proc, stop = cp.start_kube_scheduler(config, feature_gates=shape.gates or None), cp.stop_kube_scheduler
    elif kind == "kubesched":
        gates_arg = [f"--feature-gates={upstream.format_feature_gates(shape.gates)}"] if shape.gates else []
        proc = _start_kubesched(cp, config, [*gates_arg, f"--emulated-version={version}"],
                                Path(arg) / "src" if arg else None)
        stop = cp.stop_kubesched_run
    else:
        raise SystemExit(f"e2e_upstream.py --startup: {spec!r}: only kube-scheduler[:N], kubesched[@DIR]")
    wall, cpu = time.monotonic() - t0, cpu_s(proc.popen.pid)
    stop()
    return {"mode": "startup", "shape": shape.name, "scheduler": spec, "version": version,
            "cpu_at_ready_s": round(cpu, 3), "wall_to_ready_s": round(wall, 2),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


TRANSPORTS = ("apiclient", "aiohttp", "aiohttp-uvloop", "httpx-h2", "http.client-16", "urllib3-16", "pycurl-h2",
              "pycurl-h1-16")
"""``--transport`` examples; ``http.client-N`` / ``urllib3-N`` / ``pycurl-h1-N`` take any thread or connection
count N."""


def client_bench_child(kubeconfig: str, names: list[str], nodes: int, inflight: int,
                       transport: str = "apiclient") -> dict[str, Any]:
    """In this process (``--client-bench`` child, this or another checkout's ``src``): the two
    requests ``kubesched run`` sends per pod, through its own ``APIClient`` — a binding POST for each
    pod of ``names`` (``inflight`` at a time) and then one ``Scheduled`` event through an
    ``EventRecorder`` on a derived client (its own 16 in flight) — and the process's CPU per request.
    Another ``transport`` (:data:`TRANSPORTS`) sends the binding POSTs only, through that stack."""
    import asyncio
    import resource

    from kubesched.kube.client import APIClient, load_config
    from kubesched.kube.events import EventRecorder

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
        return r.ru_utime + r.ru_stime

    def binding(i: int, name: str) -> tuple[str, bytes]:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": NAMESPACE},
                "target": {"apiVersion": "v1", "kind": "Node", "name": f"node-{i % nodes:05d}"}}
        return f"/api/v1/namespaces/{NAMESPACE}/pods/{name}/binding", json.dumps(body).encode()

    config = load_config(kubeconfig, qps=-1, burst=0)
    ns_path = f"/api/v1/namespaces/{NAMESPACE}"

    async def main() -> dict[str, Any]:
        client = APIClient(config, user_agent_suffix="/scheduler")
        rec = EventRecorder(client.derive(), reporting_controller="default-scheduler")
        rec_task = asyncio.create_task(rec.run())
        await asyncio.gather(*(client.get(ns_path) for _ in range(inflight)))  # the pool's connections
        slots = asyncio.Semaphore(inflight)

        async def bind(i: int, name: str) -> None:
            async with slots:
                await client.bind(NAMESPACE, name, "", f"node-{i % nodes:05d}")

        c0, w0 = cpu(), time.monotonic()
        await asyncio.gather(*(bind(i, n) for i, n in enumerate(names)))
        c1, w1 = cpu(), time.monotonic()
        for start in range(0, len(names), 500):  # the recorder's queue holds 1000
            for i, n in enumerate(names[start:start + 500], start):
                rec.emit({"apiVersion": "v1", "kind": "Pod", "namespace": NAMESPACE, "name": n}, None, "Normal",
                         "Scheduled", "Binding", f"Successfully assigned {NAMESPACE}/{n} to node-{i % nodes:05d}")
            while rec.written + rec.failed < min(start + 500, len(names)):
                await asyncio.sleep(0.005)
        c2, w2 = cpu(), time.monotonic()
        rec_task.cancel()
        await client.close()
        await rec.client.close()
        n = len(names)
        return {"requests": n, "bind_ms_cpu": round(1000 * (c1 - c0) / n, 3), "bind_wall_s": round(w1 - w0, 2),
                "event_ms_cpu": round(1000 * (c2 - c1) / n, 3), "event_wall_s": round(w2 - w1, 2),
                "events_failed": rec.failed}

    async def headers() -> dict[str, str]:
        client = APIClient(config, user_agent_suffix="/scheduler")
        h = dict(await client._headers("application/json"))
        await client.close()
        return h

    async def httpx_h2() -> tuple[float, float]:
        import httpx

        async with httpx.AsyncClient(http2=True, verify=config.ssl or False, base_url=config.server,
                                     headers=await headers()) as c:
            await asyncio.gather(*(c.get(ns_path) for _ in range(inflight)))
            slots = asyncio.Semaphore(inflight)

            async def bind(i: int, name: str) -> None:
                path, body = binding(i, name)
                async with slots:
                    r = await c.post(path, content=body)
                if r.status_code != 201:
                    raise RuntimeError(f"POST {path}: {r.status_code} {r.text[:200]}")

            c0, w0 = cpu(), time.monotonic()
            await asyncio.gather(*(bind(i, n) for i, n in enumerate(names)))
            return cpu() - c0, time.monotonic() - w0

    async def threads(kind: str, n_threads: int) -> tuple[float, float]:
        import http.client
        import threading
        from concurrent.futures import ThreadPoolExecutor
        from urllib.parse import urlsplit

        import urllib3

        u = urlsplit(config.server)
        h = await headers()
        local = threading.local()
        pool = urllib3.HTTPSConnectionPool(u.hostname, u.port, maxsize=n_threads, block=True,
                                           ssl_context=config.ssl, retries=False) if kind == "urllib3" else None

        def call(method: str, path: str, body: bytes | None) -> None:
            if pool is not None:
                r = pool.urlopen(method, path, body=body, headers=h, retries=False)
                status, data = r.status, r.data
            else:
                conn = getattr(local, "conn", None)
                if conn is None:
                    conn = local.conn = http.client.HTTPSConnection(u.hostname or "", u.port, context=config.ssl)
                conn.request(method, path, body, h)
                resp = conn.getresponse()
                status, data = resp.status, resp.read()
            if status not in (200, 201):
                raise RuntimeError(f"{method} {path}: {status} {data[:200]!r}")

        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(n_threads) as ex:
            await asyncio.gather(*(loop.run_in_executor(ex, call, "GET", ns_path, None) for _ in range(inflight)))
            slots = asyncio.Semaphore(inflight)

            async def bind(i: int, name: str) -> None:
                async with slots:
                    await loop.run_in_executor(ex, call, "POST", *binding(i, name))

            c0, w0 = cpu(), time.monotonic()
            await asyncio.gather(*(bind(i, n) for i, n in enumerate(names)))
            return cpu() - c0, time.monotonic() - w0

    async def curl(http2: bool, conns: int) -> tuple[float, float]:
        import base64

        from kubesched.kube._curl import CurlMultiAsync, CurlTLS

        cluster = next(c["cluster"] for c in yaml.safe_load(Path(kubeconfig).read_text())["clusters"])
        ca = base64.b64decode(cluster["certificate-authority-data"])
        m = CurlMultiAsync(tls=CurlTLS(ca=ca), http2=http2, max_connections=conns)
        h = [f"{k}: {v}" for k, v in (await headers()).items()] + ["Expect:"]

        async def call(method: str, path: str, body: bytes | None) -> None:
            status, data, _ = await m.request(method, config.server + path, h, body)
            if status not in (200, 201):
                raise RuntimeError(f"{method} {path}: {status} {data[:200]!r}")

        await asyncio.gather(*(call("GET", ns_path, None) for _ in range(inflight)))
        slots = asyncio.Semaphore(inflight)

        async def bind(i: int, name: str) -> None:
            async with slots:
                await call("POST", *binding(i, name))

        c0, w0 = cpu(), time.monotonic()
        await asyncio.gather(*(bind(i, n) for i, n in enumerate(names)))
        out = cpu() - c0, time.monotonic() - w0
        m.close()
        return out

    from kubesched.cli._loop import loop_factory  # KUBESCHED_EVENT_LOOP=uvloop, as `kubesched run`

    if transport in ("apiclient", "aiohttp", "aiohttp-uvloop"):
        if transport != "apiclient":  # APIClient on aiohttp alone (before session 9: always)
            os.environ["KUBESCHED_HTTP_TRANSPORT"] = "aiohttp"
        factory = loop_factory()
        if transport == "aiohttp-uvloop":
            import uvloop

            factory = uvloop.new_event_loop
        with asyncio.Runner(loop_factory=factory) as runner:
            out = runner.run(main())
        return {**out, "transport": transport}
    kind, _, count = transport.partition("-")
    if transport == "httpx-h2":
        spent, wall = asyncio.run(httpx_h2())
    elif transport == "pycurl-h2":
        spent, wall = asyncio.run(curl(True, 0))
    elif transport.startswith("pycurl-h1-") and transport[10:].isdigit():
        spent, wall = asyncio.run(curl(False, int(transport[10:])))
    elif kind in ("http.client", "urllib3") and count.isdigit():
        spent, wall = asyncio.run(threads(kind, int(count)))
    else:
        raise SystemExit(f"e2e_upstream.py --transport: {transport!r}: one of {', '.join(TRANSPORTS)}")
    n = len(names)
    return {"requests": n, "transport": transport, "bind_ms_cpu": round(1000 * spent / n, 3),
            "bind_wall_s": round(wall, 2), "event_ms_cpu": None, "events_failed": 0}


def client_bench(cp: upstream.ControlPlane, spec: str, n: int, nodes: int, inflight: int,
                 threads: int, transport: str = "apiclient") -> dict[str, Any]:
    """``--client-bench``: ``n`` pods created, then :func:`client_bench_child` in a child process
    running ``spec``'s code (``kubesched`` or ``kubesched@DIR``), then the pods deleted."""
    kind, _, arg = spec.partition("@")
    if kind != "kubesched":
        raise SystemExit(f"e2e_upstream.py --client-bench: {spec!r}: only kubesched[@DIR]")
    run = next(_RUNS)
    names = [f"cb{run}-{i}" for i in range(n)]
    create_all(cp, [pod(nm) for nm in names], threads)
    src = Path(arg) / "src" if arg else Path(upstream.__file__).resolve().parents[2]
    if src not in _COMPILED:
        compileall.compile_dir(str(src), quiet=1)
        _COMPILED.add(src)
    job = json.dumps({"kubeconfig": str(cp.kubeconfig_for("system:kube-scheduler")), "names": names,
                      "nodes": nodes, "inflight": inflight, "transport": transport})
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--client-bench-child"], input=job, text=True,
                         capture_output=True, check=True, env={**os.environ, "KUBESCHED_BENCH_SRC": str(src)})
    delete_pending(cp, make_shape("basic", 0, 0, 1))
    return {"mode": "client", "scheduler": spec, **json.loads(out.stdout.splitlines()[-1]),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def _median(values: list[float | None]) -> float | str:
    """The median of the values given, ``-`` when none is."""
    given = [v for v in values if v is not None]
    return statistics.median(given) if given else "-"


def summary(rows: list[dict[str, Any]], schedulers: list[str]) -> list[str]:
    """Median pods per CPU-second and wall per scheduler of one shape, ratio to the first."""
    out = []
    med: dict[str, tuple[float, float, float]] = {}
    for s in schedulers:
        rs = [r for r in rows if r["scheduler"] == s and r["bound"] == r["pods"]]
        if rs:
            med[s] = (statistics.median(r["pods_per_cpu_s"] for r in rs),
                      statistics.median(r["cpu_s"] for r in rs),
                      statistics.median(r["wall_to_last_bind_s"] for r in rs))
    ref = med.get(schedulers[0])
    for s, (ppc, cpu, wall) in med.items():
        ratio = f"{ppc / ref[0]:.2f}x CPU, {ref[2] / wall:.2f}x wall" if ref else "-"
        n = sum(1 for r in rows if r["scheduler"] == s and r["bound"] == r["pods"])
        out.append(f"  {s:<28} {ppc:8.1f} pods/CPU-s  {cpu:7.2f} CPU-s  {wall:7.2f} s wall  (n={n}; vs first: {ratio})")
    return out


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The README table of ``--json`` rows: per shape and scheduler the medians of CPU seconds,
    pods per CPU-second, CPU per pod after ready, wall to the last bind, and the ratios to
    ``kube-scheduler:16`` of the same shape (pods per CPU-second; wall, >1 = faster)."""
    out = ["| shape (pods per run) | scheduler | runs | CPU-s | CPU-s at ready | pods/CPU-s | ms CPU/pod after ready "
           "| wall to last bind | vs kube-scheduler:16: pods/CPU-s, wall | load (1 min) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    for shape in shapes:
        rs = [r for r in rows if r["shape"] == shape and r["bound"] == r["pods"]]
        med: dict[str, dict[str, float]] = {}
        for s in dict.fromkeys(r["scheduler"] for r in rs):
            mine = [r for r in rs if r["scheduler"] == s]
            after = [1000 * (r["cpu_s"] - r["cpu_at_ready_s"]) / r["pods"] for r in mine
                     if r.get("cpu_at_ready_s") is not None]
            med[s] = {"n": len(mine), "cpu": statistics.median(r["cpu_s"] for r in mine),
                      "ppc": statistics.median(r["pods_per_cpu_s"] for r in mine),
                      "after": statistics.median(after) if after else float("nan"),
                      "ready": statistics.median(r["cpu_at_ready_s"] for r in mine)
                      if all(r.get("cpu_at_ready_s") is not None for r in mine) else float("nan"),
                      "wall": statistics.median(r["wall_to_last_bind_s"] for r in mine),
                      "lo": min(r["loadavg"][0] for r in mine), "hi": max(r["loadavg"][0] for r in mine),
                      "pods": mine[0]["pods"]}
        ref = med.get("kube-scheduler:16")
        for s, m in med.items():
            ratio = "–"
            if ref and s != "kube-scheduler:16":
                ratio = f"{m['ppc'] / ref['ppc']:.2f}×, {ref['wall'] / m['wall']:.2f}×"
            out.append(f"| {shape} ({m['pods']:.0f}) | {s} | {m['n']:.0f} | {m['cpu']:.2f} | {m['ready']:.2f} | "
                       f"{m['ppc']:.1f} | {m['after']:.2f} | {m['wall']:.1f} s | {ratio} | "
                       f"{m['lo']:.0f}–{m['hi']:.0f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", action="append", default=[], help=f"{', '.join(SHAPES)} or all (repeatable)")
    ap.add_argument("--scheduler", action="append", default=[],
                    help="kube-scheduler[:PARALLELISM], kubesched, kubesched@CHECKOUT, cmd:COMMAND (repeatable)")
    ap.add_argument("--version", default="1.37", choices=sorted(upstream.VERSIONS), help="upstream binaries")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=2000, help="backlog per run (pending pods)")
    ap.add_argument("--gang-size", type=int, default=10, help="gang shape: members per PodGroup (minCount)")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions (each runs every scheduler once)")
    ap.add_argument("--creators", type=int, default=8, help="threads creating objects")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one run may take to bind all pods")
    ap.add_argument("--json", action="store_true", help="one JSON object per run on stdout")
    ap.add_argument("--startup", type=int, metavar="N", default=0,
                    help="instead of backlogs: start each scheduler N times on the shape's fixed objects, "
                         "CPU seconds to its /readyz")
    ap.add_argument("--client-bench", type=int, metavar="N", default=0,
                    help="instead of backlogs: N binding POSTs and N Scheduled events from kubesched's APIClient "
                         "(each kubesched[@DIR] --scheduler), CPU per request")
    ap.add_argument("--inflight", type=int, default=100, help="--client-bench: binding POSTs in flight")
    ap.add_argument("--transport", action="append", default=[],
                    help=f"--client-bench: HTTP stack of the binding POSTs ({', '.join(TRANSPORTS)}; repeatable)")
    ap.add_argument("--client-bench-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--table", metavar="JSONL", action="append", default=[],
                    help="print the markdown table of saved --json output (repeatable) and exit")
    a = ap.parse_args(argv)
    if a.client_bench_child:
        job = json.loads(sys.stdin.read())
        print(json.dumps(client_bench_child(job["kubeconfig"], job["names"], job["nodes"], job["inflight"],
                                            job.get("transport", "apiclient"))))
        return 0
    if a.table:
        rows = [json.loads(line) for f in a.table for line in Path(f).read_text().splitlines()
                if line.startswith("{")]
        print(markdown_table(rows))
        return 0
    shapes = list(SHAPES) if "all" in a.shape else (a.shape or ["basic"])
    schedulers = a.scheduler or ["kube-scheduler:16", "kube-scheduler:2", "kubesched"]
    if a.version == "1.34" and "gang" in shapes:
        print("e2e_upstream.py: the gang shape needs --version 1.37 (v1beta1 PodGroup); skipped", file=sys.stderr)
        shapes.remove("gang")
    version = {"1.37": "1.37", "1.34": "1.34"}[a.version]
    summaries: list[str] = []
    for shape_name in shapes:
        pods = a.pods
        shape = make_shape(shape_name, a.nodes, pods, a.gang_size)
        try:
            cp = upstream.ControlPlane.start(
                version=version, feature_gates=shape.gates or None,
                extra_apiserver_args=["--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
                                      *shape.apiserver_args])
        except upstream.UpstreamNotBuilt as e:
            print(e, file=sys.stderr)
            return 2
        rows: list[dict[str, Any]] = []
        try:
            c = Client(cp)
            for ns in (NAMESPACE, FILL_NAMESPACE):
                c.call("POST", "/api/v1/namespaces",
                       {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            t_fixed = create_all(cp, shape.fixed, a.creators)
            print(f"# {shape_name}: {a.nodes} nodes, {len(shape.fixed)} fixed objects in {t_fixed:.1f} s; "
                  f"kube-apiserver {cp.binaries.version}", file=sys.stderr)
            if a.startup or a.client_bench:
                transports = a.transport or ["apiclient"]
                for r in range(a.repeat):
                    for s in schedulers:
                        row = (startup_one(cp, shape, s, version) for _ in range(a.startup)) if a.startup else \
                            (client_bench(cp, s, a.client_bench, a.nodes, a.inflight, a.creators, t)
                             for t in transports)
                        for one in row:
                            rows.append({**one, "repetition": r})
                            print(json.dumps(rows[-1]), flush=True)
                for s in schedulers:
                    for t in [None] if a.startup else transports:
                        mine = [x for x in rows if x["scheduler"] == s and x.get("transport") == t]
                        keys = ("cpu_at_ready_s", "wall_to_ready_s") if a.startup else ("bind_ms_cpu", "event_ms_cpu")
                        print(f"# {shape_name} {s}{'' if t is None else ' ' + t}: median of {len(mine)}: " + ", ".join(
                            f"{k} {_median([x[k] for x in mine])}" for k in keys), file=sys.stderr, flush=True)
                continue
            for r in range(a.repeat):
                for s in schedulers:
                    refill(cp, shape, a.creators)
                    row = run_one(cp, shape, s, version, pods, a.timeout, a.creators, r)
                    rows.append(row)
                    if a.json:
                        print(json.dumps(row), flush=True)
                    else:
                        print(f"{shape_name} #{r} {s}: {row['bound']}/{pods} bound, {row['cpu_s']} CPU-s = "
                              f"{row['pods_per_cpu_s']} pods/CPU-s ({row['cpu_at_ready_s']} at ready), "
                              f"{row['wall_to_last_bind_s']} s to the last bind "
                              f"(first→last {row['first_to_last_bind_s']} s; load {row['loadavg']})", flush=True)
                    delete_pending(cp, shape)
        finally:
            cp.stop()
        summaries += [f"{shape_name} ({a.nodes} nodes, {pods} pods, {cp.binaries.version}, median of "
                      f"{a.repeat}):", *summary(rows, schedulers)]
        print("\n".join(summaries[-len(schedulers) - 1:]), file=sys.stderr, flush=True)
    if len(shapes) > 1:
        print("\n".join(summaries), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
