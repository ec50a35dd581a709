"""End-to-end ``kubesched simulate`` on a large cluster, as a user runs it (issue 10 §5).

    /work/venv/bin/python benchmarks/simulate_large.py                       # 50k nodes, 10k bound, 20k pending
    /work/venv/bin/python benchmarks/simulate_large.py --nodes 5000 --bound 1000 --pending 2000
    /work/venv/bin/python benchmarks/simulate_large.py -o yaml               # YAML output instead of JSON
    /work/venv/bin/python benchmarks/simulate_large.py --keep /tmp/large     # keep input/output files
    /work/venv/bin/python benchmarks/simulate_large.py --profile /tmp/sim.prof   # cProfile the child

It writes one JSON file (a ``v1 List``: Namespaces, PriorityClasses, Services, Nodes, bound
Pods, pending Pods; deterministic for a given ``--seed``), runs ``python -m kubesched.cli.main
simulate -f FILE -o json > OUT`` in a subprocess, and prints:

- the wall time of the whole child process (what the user waits for), its CPU time (user +
  system: robust to other load on the machine) and the load average, and its peak RSS
  (``getrusage(RUSAGE_CHILDREN).ru_maxrss``, the child being the only one);
- the child's own phase times (``load``, ``build``, ``schedule``, ``output``), which the CLI
  writes to stderr when ``KUBESCHED_PHASE_TIMES=1`` is set (interpreter start-up and imports
  are the difference between the sum and the wall time);
- how many pods were bound, and the input/output sizes.

The objects are shaped as a real cluster's: nodes with the well-known labels (zone, region,
instance type, arch, os, hostname), capacity/allocatable, conditions, addresses, nodeInfo and
image lists, taints on GPU and control-plane nodes; pods created by ReplicaSets (labels with
``pod-template-hash``, ``ownerReferences``), one or two containers with requests/limits and
ports, tolerations, some node selectors / preferred node affinity, priority classes. Bound pods
carry ``spec.nodeName`` and a Running status on a node with room for them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
ZONES = [f"{r}{z}" for r in ("eu-west-1", "us-east-1") for z in ("a", "b", "c")]
SUFFIX = "bcdfghjklmnpqrstvwxz2456789"
INSTANCE_TYPES = [  # name, cpu, memory GiB, gpus, weight
    ("m5.xlarge", 4, 16, 0, 30),
    ("m5.2xlarge", 8, 32, 0, 30),
    ("m5.4xlarge", 16, 64, 0, 20),
    ("r5.4xlarge", 16, 128, 0, 10),
    ("c5.9xlarge", 36, 72, 0, 7),
    ("p4d.24xlarge", 96, 1152, 8, 3),
]
IMAGES = {
    "registry.k8s.io/pause:3.10": 320368,
    "registry.k8s.io/kube-proxy:v1.34.1": 30212411,
    "docker.io/library/nginx:1.27": 72955450,
    "docker.io/library/redis:7.2": 40983513,
    "docker.io/library/postgres:16": 158427395,
    "quay.io/prometheus/node-exporter:v1.8.2": 11733014,
    "ghcr.io/example/api:2.14.3": 91020311,
    "ghcr.io/example/worker:2.14.3": 120331045,
    "nvcr.io/nvidia/pytorch:24.08-py3": 9842319360,
}
APP_IMAGES = [i for i in IMAGES if "pause" not in i and "proxy" not in i and "node-exporter" not in i]


def _digest(image: str) -> str:
    return image.rsplit(":", 1)[0] + "@sha256:" + hashlib.sha256(image.encode()).hexdigest()


def generate(n_nodes: int, n_bound: int, n_pending: int, seed: int, full: bool = False) -> dict[str, Any]:
    """The whole input as one ``v1 List`` (plain data); ``full`` adds what ``kubectl get -o json`` also
    shows (uids, heartbeat conditions, image digests, env, probes, volumes...): about 4 KB per object
    instead of 1 KB."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    namespaces = ["default", "kube-system", "web", "data", "batch", "ml", "payments", "search"]
    for ns in namespaces:
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    for name, value, default in (("high-priority", 1000000, False), ("default-priority", 1000, True),
                                 ("low-priority", 100, False)):
        pc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                              "metadata": {"name": name}, "value": value}
        if default:
            pc["globalDefault"] = True
        items.append(pc)

    # nodes
    weights = [t[4] for t in INSTANCE_TYPES]
    node_free: list[list[int]] = []  # [cpu m, mem Mi, pods] left, for placing bound pods
    node_names: list[str] = []
    for i in range(n_nodes):
        itype, cpu, mem_gi, gpus, _ = rng.choices(INSTANCE_TYPES, weights)[0]
        zone = ZONES[i % len(ZONES)]
        name = f"ip-10-{(i >> 16) & 255}-{(i >> 8) & 255}-{i & 255}.{zone[:-1]}.compute.internal"
        is_cp = i < 3
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": itype,
            "topology.kubernetes.io/region": zone[:-1],
            "topology.kubernetes.io/zone": zone,
            "eks.amazonaws.com/nodegroup": f"ng-{itype.split('.')[0]}-{zone[-1]}",
        }
        taints: list[dict[str, Any]] = []
        if is_cp:
            labels["node-role.kubernetes.io/control-plane"] = ""
            taints.append({"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"})
        if gpus:
            labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-40GB"
            taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        if cpu >= 16:
            labels["disktype"] = "ssd"
        alloc_cpu = cpu * 1000 - (60 + 10 * cpu)
        alloc_mem = mem_gi * 1024 - 512 - mem_gi * 25
        capacity = {"cpu": str(cpu), "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                    "hugepages-2Mi": "0", "memory": f"{mem_gi * 1024 * 1024}Ki", "pods": "110"}
        allocatable = {"cpu": f"{alloc_cpu}m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                       "hugepages-2Mi": "0", "memory": f"{alloc_mem}Mi", "pods": "110"}
        if gpus:
            capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(gpus)
        images = ["registry.k8s.io/pause:3.10", "registry.k8s.io/kube-proxy:v1.34.1",
                  "quay.io/prometheus/node-exporter:v1.8.2"]
        images += rng.sample(APP_IMAGES if gpus else APP_IMAGES[:-1], rng.randint(0, 3))
        ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
        if full:
            node: dict[str, Any] = {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": labels,
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                             "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                             "creationTimestamp": "2025-09-01T10:00:00Z",
                             "uid": f"{rng.getrandbits(128):032x}"},
                "spec": {"providerID": f"aws:///{zone}/i-{rng.getrandbits(64):016x}",
                         **({"taints": taints} if taints else {})},
                "status": {
                    "capacity": capacity, "allocatable": allocatable,
                    "conditions": [
                        {"type": t, "status": "False", "reason": r, "message": m,
                         "lastHeartbeatTime": "2025-09-23T08:00:00Z", "lastTransitionTime": "2025-09-01T10:00:00Z"}
                        for t, r, m in (("MemoryPressure", "KubeletHasSufficientMemory",
                                         "kubelet has sufficient memory available"),
                                        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                        ("PIDPressure", "KubeletHasSufficientPID",
                                         "kubelet has sufficient PID available"))
                    ] + [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                          "message": "kubelet is posting ready status", "lastHeartbeatTime": "2025-09-23T08:00:00Z",
                          "lastTransitionTime": "2025-09-01T10:00:00Z"}],
                    "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name},
                                  {"type": "InternalDNS", "address": name}],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                    "nodeInfo": {"architecture": "amd64", "bootID": f"{rng.getrandbits(128):032x}",
                                 "containerRuntimeVersion": "containerd://1.7.22", "kernelVersion": "6.1.109",
                                 "kubeProxyVersion": "v1.34.1", "kubeletVersion": "v1.34.1",
                                 "machineID": f"{rng.getrandbits(128):032x}", "operatingSystem": "linux",
                                 "osImage": "Amazon Linux 2023.5.20240916",
                                 "systemUUID": f"{rng.getrandbits(128):032x}"},
                    "images": [{"names": [_digest(im), im], "sizeBytes": IMAGES[im]}
                               for im in sorted(images, key=lambda im: -IMAGES[im])],
                },
            }
        else:
            for k in ("hugepages-1Gi", "hugepages-2Mi"):
                del capacity[k], allocatable[k]
            node = {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {"taints": taints} if taints else {},
                "status": {
                    "capacity": capacity, "allocatable": allocatable,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                    "message": "kubelet is posting ready status"}],
                    "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
                    "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.34.1",
                                 "containerRuntimeVersion": "containerd://1.7.22", "operatingSystem": "linux"},
                    "images": [{"names": [im], "sizeBytes": IMAGES[im]}
                               for im in sorted(images, key=lambda im: -IMAGES[im])],
                },
            }
        items.append(node)
        node_names.append(name)
        node_free.append([alloc_cpu, alloc_mem, 110] if not (is_cp or gpus) else [0, 0, 0])

    # workloads: ReplicaSets by name (the objects themselves are not in the input)
    apps = []
    for a in range(max(1, (n_bound + n_pending) // 100)):
        ns = rng.choice(namespaces[2:])
        app = f"svc{a:04d}"
        rs_hash = "".join(rng.choice(SUFFIX) for _ in range(10))
        cpu = rng.choice([50, 100, 100, 250, 250, 500, 1000])
        mem = rng.choice([64, 128, 256, 256, 512, 1024, 2048])
        apps.append({
            "ns": ns, "app": app, "hash": rs_hash, "cpu": cpu, "mem": mem,
            "image": rng.choice(APP_IMAGES[:-1]), "sidecar": rng.random() < 0.3,
            "prio": rng.choice([None, None, "high-priority", "low-priority"]),
            "zone": rng.choice(ZONES) if rng.random() < 0.1 else None,
            "prefer_ssd": rng.random() < 0.2,
            "uid": f"{rng.getrandbits(128):032x}",
        })
    for a in apps[: max(1, len(apps) // 5)]:
        items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": a["app"], "namespace": a["ns"]},
                      "spec": {"selector": {"app": a["app"]}, "ports": [{"port": 8080, "targetPort": 8080}]}})

    def pod(idx: int, bound_to: int | None) -> dict[str, Any]:
        a = apps[idx % len(apps)]
        name = f"{a['app']}-{a['hash']}-{''.join(rng.choice(SUFFIX) for _ in range(5))}"
        main: dict[str, Any] = {
            "name": "main", "image": a["image"],
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "resources": {"requests": {"cpu": f"{a['cpu']}m", "memory": f"{a['mem']}Mi"},
                          "limits": {"cpu": f"{a['cpu'] * 2}m", "memory": f"{a['mem']}Mi"}},
        }
        containers = [main]
        if a["sidecar"]:
            containers.append({"name": "proxy", "image": "docker.io/library/nginx:1.27",
                               "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}})
        spec: dict[str, Any] = {"containers": containers}
        if full:
            main.update({
                "imagePullPolicy": "IfNotPresent",
                "env": [{"name": "APP", "value": a["app"]}, {"name": "LOG_LEVEL", "value": "info"}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
            })
            spec.update({
                "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "restartPolicy": "Always",
                "schedulerName": "default-scheduler", "serviceAccountName": "default",
                "terminationGracePeriodSeconds": 30,
                "tolerations": [
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300}],
                "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
            })
        if a["prio"]:
            spec["priorityClassName"] = a["prio"]
        if a["zone"]:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": a["zone"]}
        if a["prefer_ssd"]:
            spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"matchExpressions": [
                    {"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}}
        p: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": a["ns"],
                         "labels": {"app": a["app"], "pod-template-hash": a["hash"]},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": f"{a['app']}-{a['hash']}", "uid": a["uid"],
                                              "controller": True, "blockOwnerDeletion": True}],
                         "creationTimestamp": f"2025-09-23T{8 + idx // 36000:02d}:{idx // 600 % 60:02d}:"
                                              f"{idx // 10 % 60:02d}Z"},
            "spec": spec,
        }
        if full:
            p["metadata"]["uid"] = f"{rng.getrandbits(128):032x}"
        if bound_to is not None:
            spec["nodeName"] = node_names[bound_to]
            spec.pop("priorityClassName", None)
            spec["priority"] = 1000
            p["status"] = {"phase": "Running", "podIP": f"100.64.{idx >> 8 & 255}.{idx & 255}",
                           "startTime": "2025-09-23T07:00:00Z"}
        else:
            p["status"] = {"phase": "Pending"}
        return p

    placed = 0
    tries = 0
    while placed < n_bound and tries < n_bound * 20:
        tries += 1
        p = pod(placed, None)
        a = apps[placed % len(apps)]
        need_cpu = a["cpu"] + (50 if a["sidecar"] else 0)
        need_mem = a["mem"] + (64 if a["sidecar"] else 0)
        cand = rng.randrange(n_nodes)
        f = node_free[cand]
        zone_ok = a["zone"] is None or ZONES[cand % len(ZONES)] == a["zone"]
        if f[0] >= need_cpu and f[1] >= need_mem and f[2] >= 1 and zone_ok:
            f[0] -= need_cpu
            f[1] -= need_mem
            f[2] -= 1
            p = pod(placed, cand)
            items.append(p)
            placed += 1
    for j in range(n_pending):
        items.append(pod(n_bound + j, None))
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50_000)
    ap.add_argument("--bound", type=int, default=10_000)
    ap.add_argument("--pending", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1, help="generator seed (the input)")
    ap.add_argument("--full", action="store_true",
                    help="objects as kubectl get -o json shows them (~4 KB each instead of ~1 KB)")
    ap.add_argument("-o", "--output", choices=["json", "yaml"], default="json")
    ap.add_argument("--keep", metavar="DIR", help="write input.json and out.<fmt> here and keep them")
    ap.add_argument("--input", metavar="FILE", help="use this input file instead of generating one")
    ap.add_argument("--profile", metavar="FILE.prof", help="run the child under cProfile, stats to FILE.prof")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the child (default: this one)")
    ap.add_argument("--src", default=str(ROOT / "src"),
                    help="kubesched sources to run (default: this checkout's src; e.g. an older commit's "
                         "`git archive COMMIT src | tar -x -C DIR`, DIR/src)")
    args = ap.parse_args()

    tmp = None
    if args.keep:
        workdir = Path(args.keep)
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="simulate-large-")
        workdir = Path(tmp.name)
    try:
        if args.input:
            inp = Path(args.input)
        else:
            inp = workdir / "input.json"
            t0 = time.perf_counter()
            doc = generate(args.nodes, args.bound, args.pending, args.seed, args.full)
            inp.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
            del doc
            print(f"generated {inp} ({_fmt_bytes(inp.stat().st_size)}) in {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
        out = workdir / f"out.{args.output}"
        cmd = [args.python]
        if args.profile:
            cmd += ["-m", "cProfile", "-o", args.profile]
        cmd += ["-m", "kubesched.cli.main", "simulate", "-f", str(inp), "-o", args.output]
        env = dict(os.environ, KUBESCHED_PHASE_TIMES="1")
        env["PYTHONPATH"] = args.src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        t0 = time.perf_counter()
        with open(out, "wb") as fh:
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, env=env, check=False)
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss_kib = usage.ru_maxrss
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            print(stderr, file=sys.stderr)
            print(f"child exited {proc.returncode}", file=sys.stderr)
            return 1
        phases = [ln for ln in stderr.splitlines() if ln.startswith("phase-times:")]
        others = [ln for ln in stderr.splitlines() if not ln.startswith("phase-times:")]
        data = out.read_bytes()
        bound = data.count(b'"nodeName"') if args.output == "json" else data.count(b"  nodeName: ")
        print(" ".join(cmd[cmd.index("-m", 1 if args.profile else 0):]) + f" > {out.name}")
        what = (f"{args.input}" if args.input else
                f"{args.nodes} nodes, {args.bound} bound, {args.pending} pending{' (--full)' if args.full else ''}")
        print(f"  input   {what}; "
              f"{_fmt_bytes(inp.stat().st_size)}")
        print(f"  wall    {wall:.2f} s (cpu {usage.ru_utime + usage.ru_stime:.2f} s: user {usage.ru_utime:.2f}, "
              f"sys {usage.ru_stime:.2f}; load average {os.getloadavg()[0]:.1f})")
        print(f"  peakRSS {_fmt_bytes(rss_kib * 1024)}")
        for ln in phases:
            print("  " + ln)
        print(f"  output  {_fmt_bytes(len(data))}, {bound} pods with spec.nodeName")
        for ln in others[-5:]:
            print("  stderr: " + ln)
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
