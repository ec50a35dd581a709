#!/usr/bin/env python3
"""Generate the quickstart cluster manifests (deterministic: fixed seed).

    python examples/quickstart/generate.py          # rewrite the YAML files next to this script
    python examples/quickstart/generate.py --check  # print the feasibility report only

The YAML files are what users read; this script only exists so that the example stays
internally consistent: every bound pod really fits on its node (resources, taints,
selectors, host ports), and the pending pods that cannot fit anywhere are exactly the
ones README.md lists. It checks both with a small, deliberately simple feasibility
model (not the scheduler) and fails loudly when they drift.
"""

from __future__ import annotations

import hashlib
import random
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml

SEED = 20250923
HERE = Path(__file__).resolve().parent
ZONES = ("zone-a", "zone-b", "zone-c")
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
CP_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
SPOT_TAINT = {"key": "node.example.com/spot", "value": "true", "effect": "PreferNoSchedule"}

#: instance type → (vCPU, memory GiB, GPUs)
INSTANCE_TYPES = {
    "standard-4": (4, 16, 0),
    "standard-8": (8, 32, 0),
    "standard-16": (16, 64, 0),
    "standard-32": (32, 128, 0),
    "gpu-a100-4": (32, 256, 4),
    "gpu-a100-8": (64, 512, 8),
}

#: pending pods that no node can hold, and why (checked against the feasibility model)
EXPECTED_UNFIT = {
    "batch/genome-assembly-28713000-qm4xt": "requests 64 CPUs; the largest node has 63300m allocatable",
    "ml/llama-finetune-worker-0": "requests 9 GPUs; the largest GPU node has 8",
    "ml/llm-pretrain-worker-2": "requests 8 GPUs; both 8-GPU nodes are already partly used "
                                "(by pods of the same priority, so preemption cannot help)",
    "data/analytics-nvme-0": "nodeSelector disktype=nvme; no node has that label",
    "ml/notebook-bob": "requests nvidia.com/gpu but does not tolerate the nvidia.com/gpu taint "
                       "that every GPU node carries",
}


class Gen:
    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.nodes: list[dict] = []
        self.running: list[dict] = []
        self.pending: list[dict] = []
        # feasibility state per node
        self.free: dict[str, dict[str, int]] = {}
        self.ports: dict[str, set[int]] = {}
        self.node_pods: dict[str, list[dict]] = {}
        self.images: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ helpers
    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(SUFFIX_ALPHABET) for _ in range(n))

    def rs_hash(self) -> str:
        return self.suffix(self.rng.choice((9, 10)))

    @staticmethod
    def uid(*parts: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, "kubesched-quickstart/" + "/".join(parts)))

    # ------------------------------------------------------------------ nodes
    def make_nodes(self) -> None:
        layout: list[tuple[str, str, str]] = []  # (name, zone, instance type)
        for i, z in enumerate(ZONES, 1):
            layout.append((f"control-plane-{i}", z, "standard-8"))
        sizes = ["standard-4"] * 3 + ["standard-8"] * 5 + ["standard-16"] * 4 + ["standard-32"] * 2
        for z in ZONES:
            for j, t in enumerate(sizes, 1):
                layout.append((f"worker-{z[-1]}-{j:02d}", z, t))
        for name, z, t in [("gpu-a-01", "zone-a", "gpu-a100-4"), ("gpu-a-02", "zone-a", "gpu-a100-8"),
                           ("gpu-b-01", "zone-b", "gpu-a100-4"), ("gpu-b-02", "zone-b", "gpu-a100-8"),
                           ("gpu-c-01", "zone-c", "gpu-a100-4")]:
            layout.append((name, z, t))

        spot = {"worker-a-05", "worker-b-06", "worker-c-04", "worker-c-07"}
        maintenance = {"worker-a-11"}
        cordoned = "worker-b-05"
        for idx, (name, zone, itype) in enumerate(layout):
            cpu, mem_gi, gpus = INSTANCE_TYPES[itype]
            is_cp = name.startswith("control-plane")
            labels: dict[str, str] = {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": itype,
                "topology.kubernetes.io/region": "region-1",
                "topology.kubernetes.io/zone": zone,
                "example.com/cpu-generation": str(self.rng.choice((2, 3, 3, 4)) if not gpus else 4),
            }
            if is_cp:
                labels["node-role.kubernetes.io/control-plane"] = ""
            if cpu >= 16 or gpus:
                labels["disktype"] = "ssd"
            if gpus:
                labels["accelerator"] = "nvidia-a100"
            if name in spot:
                labels["node.example.com/lifecycle"] = "spot"
            taints: list[dict] = []
            if is_cp:
                taints.append(dict(CP_TAINT))
            if gpus:
                taints.append(dict(GPU_TAINT))
            if name in spot:
                taints.append(dict(SPOT_TAINT))
            if name in maintenance:
                taints.append({"key": "example.com/maintenance", "value": "scheduled", "effect": "PreferNoSchedule"})
            spec: dict[str, Any] = {}
            if name == cordoned:
                spec["unschedulable"] = True
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                               "timeAdded": "2025-09-22T08:14:03Z"})
            if taints:
                spec["taints"] = taints

            alloc_cpu_m = cpu * 1000 - (60 + 10 * cpu)
            cap_mi = mem_gi * 1024
            alloc_mi = cap_mi - 512 - cap_mi * 25 // 1000
            disk = 500 if gpus else 100
            capacity = {"cpu": str(cpu), "ephemeral-storage": f"{disk}Gi", "memory": f"{mem_gi}Gi", "pods": "110"}
            allocatable = {"cpu": f"{alloc_cpu_m}m", "ephemeral-storage": f"{disk * 9 // 10}Gi",
                           "memory": f"{alloc_mi}Mi", "pods": "110"}
            if gpus:
                capacity["nvidia.com/gpu"] = str(gpus)
                allocatable["nvidia.com/gpu"] = str(gpus)
            zi = ZONES.index(zone)
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": spec,
                "status": {
                    "capacity": capacity,
                    "allocatable": allocatable,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                    "message": "kubelet is posting ready status"}],
                    "addresses": [{"type": "InternalIP", "address": f"10.0.{zi}.{10 + idx}"},
                                  {"type": "Hostname", "address": name}],
                    "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                                 "kubeletVersion": "v1.34.1", "kubeProxyVersion": "v1.34.1",
                                 "containerRuntimeVersion": "containerd://1.7.22",
                                 "osImage": "Ubuntu 24.04.1 LTS"},
                },
            }
            self.nodes.append(node)
            self.free[name] = {"cpu": alloc_cpu_m, "memory": alloc_mi, "gpu": gpus, "pods": 110}
            self.ports[name] = set()
            self.node_pods[name] = []
            self.images[name] = {"registry.k8s.io/pause:3.9", "registry.k8s.io/kube-proxy:v1.34.1"}
            if gpus:
                self.images[name].add("nvcr.io/nvidia/pytorch:24.08-py3")
            elif name in ("worker-a-03", "worker-b-09", "worker-c-12"):
                # pre-pulled by a warm-up job: nginx pods prefer these nodes (ImageLocality)
                self.images[name].add("docker.io/library/nginx:1.27")

    def node(self, name: str) -> dict:
        return next(n for n in self.nodes if n["metadata"]["name"] == name)

    def finish_node_images(self) -> None:
        sizes = {
            "registry.k8s.io/pause:3.9": 321520,
            "registry.k8s.io/kube-proxy:v1.34.1": 30212411,
            "docker.io/library/nginx:1.27": 72955450,
            "docker.io/library/redis:7.2": 40983513,
            "docker.io/library/postgres:16": 158427395,
            "nvcr.io/nvidia/pytorch:24.08-py3": 9842319360,
            "registry.k8s.io/etcd:3.6.4-0": 23634224,
            "registry.k8s.io/kube-apiserver:v1.34.1": 27964830,
            "registry.k8s.io/kube-controller-manager:v1.34.1": 26055376,
            "registry.k8s.io/kube-scheduler:v1.34.1": 20617504,
            "registry.k8s.io/coredns/coredns:v1.12.1": 22384805,
        }
        for node in self.nodes:
            name = node["metadata"]["name"]
            # kubelet reports only some nodes' images in this example: the rest are fresh nodes
            if name.startswith("worker-") and int(name[-2:]) % 3 == 2:
                continue
            entries = []
            for image in sorted(self.images[name]):
                size = sizes.get(image)
                if size is None:
                    continue
                repo = image.rsplit(":", 1)[0]
                digest = hashlib.sha256(image.encode()).hexdigest()
                entries.append({"names": [f"{repo}@sha256:{digest}", image], "sizeBytes": size})
            entries.sort(key=lambda e: -e["sizeBytes"])
            node["status"]["images"] = entries

    # ------------------------------------------------------------------ pods
    def pod(self, ns: str, name: str, containers: list[dict], *, labels: dict | None = None,
            owner: tuple[str, str, str] | None = None, **spec: Any) -> dict:
        meta: dict[str, Any] = {"name": name, "namespace": ns}
        if labels:
            meta["labels"] = labels
        if owner:
            api, kind, oname = owner
            meta["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": oname,
                                        "uid": self.uid(kind, ns, oname), "controller": True,
                                        "blockOwnerDeletion": True}]
        body: dict[str, Any] = {}
        order = ["schedulerName", "schedulingGates", "priorityClassName", "nodeSelector", "affinity",
                 "topologySpreadConstraints", "tolerations", "hostNetwork", "restartPolicy",
                 "terminationGracePeriodSeconds", "initContainers"]
        for k in order:
            if spec.get(k) is not None:
                body[k] = spec.pop(k)
        body["containers"] = containers
        body.update({k: v for k, v in spec.items() if v is not None})
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}

    @staticmethod
    def container(name: str, image: str, cpu: str, mem: str, *, lcpu: str | None = None,
                  lmem: str | None = None, gpu: int = 0, ports: list[int] | None = None,
                  host_ports: list[int] | None = None, **extra: Any) -> dict:
        c: dict[str, Any] = {"name": name, "image": image}
        if host_ports:
            c["ports"] = [{"containerPort": p, "hostPort": p, "protocol": "TCP"} for p in host_ports]
        elif ports:
            c["ports"] = [{"containerPort": p, "protocol": "TCP"} for p in ports]
        req: dict[str, str] = {"cpu": cpu, "memory": mem}
        lim: dict[str, str] = {}
        if lcpu:
            lim["cpu"] = lcpu
        if lmem:
            lim["memory"] = lmem
        if gpu:
            req["nvidia.com/gpu"] = str(gpu)
            lim["nvidia.com/gpu"] = str(gpu)
        c["resources"] = {"requests": req, **({"limits": lim} if lim else {})}
        c.update(extra)
        return c

    def bind(self, pod: dict, node: str, *, static: bool = False) -> None:
        # static pods are started by the kubelet itself: no scheduler ever checked them
        why = None if static else infeasible(pod, self.node(node), self, ignore_unschedulable=True)
        assert why is None, f"{pod['metadata']['namespace']}/{pod['metadata']['name']} on {node}: {why}"
        pod["spec"]["nodeName"] = node
        # keep nodeName right after containers-related scheduling fields for readability
        ip = next(a["address"] for a in self.node(node)["status"]["addresses"] if a["type"] == "InternalIP")
        host_network = pod["spec"].get("hostNetwork", False)
        pod["status"] = {"phase": "Running", "hostIP": ip,
                         "podIP": ip if host_network else f"10.244.{self.rng.randint(0, 255)}.{self.rng.randint(2, 254)}",
                         "startTime": f"2025-09-{self.rng.randint(1, 21):02d}T{self.rng.randint(0, 23):02d}:"
                                      f"{self.rng.randint(0, 59):02d}:{self.rng.randint(0, 59):02d}Z"}
        req = pod_requests(pod)
        f = self.free[node]
        for k in ("cpu", "memory", "gpu"):
            f[k] -= req[k]
        f["pods"] -= 1
        self.ports[node] |= host_ports_of(pod)
        self.node_pods[node].append(pod)
        for c in pod["spec"]["containers"]:
            self.images[node].add(normalize_image(c["image"]))
        self.running.append(pod)

    def place(self, pod: dict, candidates: list[str] | None = None) -> None:
        names = candidates or [n["metadata"]["name"] for n in self.nodes]
        ok = [n for n in names if infeasible(pod, self.node(n), self, ignore_unschedulable=True) is None]
        assert ok, f"no room for running pod {pod['metadata']['name']}"
        self.bind(pod, self.rng.choice(ok))

    def workers(self, *, exclude: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
        return [n["metadata"]["name"] for n in self.nodes
                if n["metadata"]["name"].startswith("worker-") and n["metadata"]["name"] not in exclude]

    # ------------------------------------------------------------------ running pods
    def make_running(self) -> None:
        c = self.container
        # control plane: static (mirror) pods
        for i in range(1, 4):
            node = f"control-plane-{i}"
            for comp, cpu, mem, image in [
                ("etcd", "100m", "100Mi", "registry.k8s.io/etcd:3.6.4-0"),
                ("kube-apiserver", "250m", "512Mi", "registry.k8s.io/kube-apiserver:v1.34.1"),
                ("kube-controller-manager", "200m", "128Mi", "registry.k8s.io/kube-controller-manager:v1.34.1"),
                ("kube-scheduler", "100m", "64Mi", "registry.k8s.io/kube-scheduler:v1.34.1"),
            ]:
                p = self.pod("kube-system", f"{comp}-{node}", [c(comp, image, cpu, mem)],
                             labels={"component": comp, "tier": "control-plane"},
                             owner=("v1", "Node", node), priorityClassName="system-node-critical",
                             tolerations=[{"operator": "Exists", "effect": "NoExecute"}], hostNetwork=True)
                p["metadata"]["ownerReferences"][0]["uid"] = self.uid("Node", node)
                self.bind(p, node, static=True)
        # kube-proxy DaemonSet: one per node, pinned with matchFields as the DaemonSet controller does
        for n in self.nodes:
            node = n["metadata"]["name"]
            p = self.pod("kube-system", f"kube-proxy-{self.suffix()}",
                         [c("kube-proxy", "registry.k8s.io/kube-proxy:v1.34.1", "100m", "50Mi")],
                         labels={"k8s-app": "kube-proxy", "controller-revision-hash": "6d8f7b9c4"},
                         owner=("apps/v1", "DaemonSet", "kube-proxy"), priorityClassName="system-node-critical",
                         affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                             "nodeSelectorTerms": [{"matchFields": [
                                 {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
                         tolerations=[{"operator": "Exists"}], hostNetwork=True)
            self.bind(p, node)
        # cluster add-ons
        h = self.rs_hash()
        for _ in range(2):
            p = self.pod("kube-system", f"coredns-{h}-{self.suffix()}",
                         [c("coredns", "registry.k8s.io/coredns/coredns:v1.12.1", "100m", "70Mi", lmem="170Mi",
                            ports=[53, 9153])],
                         labels={"k8s-app": "kube-dns", "pod-template-hash": h},
                         owner=("apps/v1", "ReplicaSet", f"coredns-{h}"),
                         priorityClassName="system-cluster-critical",
                         tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}, CP_TOLERATION])
            self.place(p, self.workers())
        self.coredns_hash = h
        for app, image, cpu, mem, owner_kind, sts in [
            ("metrics-server", "registry.k8s.io/metrics-server/metrics-server:v0.8.0", "100m", "200Mi", "ReplicaSet", False),
            ("grafana", "docker.io/grafana/grafana:11.2.0", "100m", "256Mi", "ReplicaSet", False),
            ("prometheus-k8s", "quay.io/prometheus/prometheus:v2.54.1", "1", "4Gi", "StatefulSet", True),
        ]:
            if sts:
                name, owner = f"{app}-0", ("apps/v1", "StatefulSet", app)
                labels = {"app": app, "statefulset.kubernetes.io/pod-name": name}
            else:
                hh = self.rs_hash()
                name, owner = f"{app}-{hh}-{self.suffix()}", ("apps/v1", "ReplicaSet", f"{app}-{hh}")
                labels = {"app": app, "pod-template-hash": hh}
            p = self.pod("kube-system", name, [c(app, image, cpu, mem, lmem=mem)], labels=labels, owner=owner,
                         priorityClassName="system-cluster-critical" if app == "metrics-server" else None)
            self.place(p, self.workers())

        # web
        self.deployment_running("web", "frontend", 6, c("nginx", "nginx:1.27", "250m", "256Mi", lcpu="500m",
                                                        lmem="512Mi", ports=[8080]), hash_="7d4b9c8f5")
        self.deployment_running("web", "api", 4, c("api", "ghcr.io/example/api:2.14.0", "500m", "512Mi",
                                                   lmem="1Gi", ports=[8080]))
        self.deployment_running("web", "checkout", 4, c("checkout", "ghcr.io/example/checkout:1.8.3", "300m",
                                                        "384Mi", lmem="768Mi", ports=[8080]))
        self.deployment_running("web", "cart", 3, c("cart", "ghcr.io/example/cart:1.3.0", "200m", "256Mi",
                                                    lmem="512Mi", ports=[8080]))
        self.ingress_nodes = ["worker-a-07", "worker-b-08", "worker-c-06"]
        h = self.rs_hash()
        self.ingress_hash = h
        for node in self.ingress_nodes:
            p = self.pod("web", f"ingress-nginx-controller-{h}-{self.suffix()}",
                         [c("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", "100m", "90Mi",
                            host_ports=[80, 443])],
                         labels={"app": "ingress-nginx", "pod-template-hash": h},
                         owner=("apps/v1", "ReplicaSet", f"ingress-nginx-controller-{h}"),
                         priorityClassName="high-priority")
            self.bind(p, node)

        # data: StatefulSets on SSD nodes
        for app, image, cpu, mem, lcpu, lmem, port in [
            ("postgres", "postgres:16", "1", "2Gi", "2", "4Gi", 5432),
            ("redis", "redis:7.2", "250m", "1Gi", None, "1Gi", 6379),
            ("kafka", "apache/kafka:3.8.0", "1", "4Gi", None, "6Gi", 9092),
            ("zookeeper", "zookeeper:3.9", "250m", "1Gi", None, "1Gi", 2181),
        ]:
            for i in range(3):
                name = f"{app}-{i}"
                p = self.pod("data", name, [c(app, image, cpu, mem, lcpu=lcpu, lmem=lmem, ports=[port])],
                             labels={"app": app, "statefulset.kubernetes.io/pod-name": name},
                             owner=("apps/v1", "StatefulSet", app), nodeSelector={"disktype": "ssd"},
                             terminationGracePeriodSeconds=60)
                self.place(p, self.workers())

        # batch: CronJob-created Job pods
        for job, n, image, cpu, mem in [("report-daily", 5, "python:3.12-slim", "500m", "1Gi"),
                                        ("etl-nightly", 4, "ghcr.io/example/etl:0.9.4", "1", "2Gi")]:
            for _ in range(n):
                jname = f"{job}-{self.rng.randint(28710000, 28712999)}"
                p = self.pod("batch", f"{jname}-{self.suffix()}", [c("job", image, cpu, mem, lmem=mem)],
                             labels={"app": job, "batch.kubernetes.io/job-name": jname},
                             owner=("batch/v1", "Job", jname), priorityClassName="low-priority",
                             restartPolicy="Never")
                self.place(p, self.workers())

        # ml: GPU workloads
        gpu_sel = {"accelerator": "nvidia-a100"}
        for ns_name, node, gpus, image, cpu, mem, owner, labels in [
            ("bert-finetune-0", "gpu-a-01", 2, "nvcr.io/nvidia/pytorch:24.08-py3", "8", "64Gi",
             ("batch/v1", "Job", "bert-finetune"), {"app": "bert-finetune"}),
            ("llm-pretrain-worker-0", "gpu-a-02", 8, "nvcr.io/nvidia/pytorch:24.08-py3", "48", "384Gi",
             ("batch/v1", "Job", "llm-pretrain"), {"app": "llm-pretrain"}),
            ("llm-pretrain-worker-1", "gpu-b-02", 4, "nvcr.io/nvidia/pytorch:24.08-py3", "24", "192Gi",
             ("batch/v1", "Job", "llm-pretrain"), {"app": "llm-pretrain"}),
        ]:
            p = self.pod("ml", ns_name, [c("trainer", image, cpu, mem, lmem=mem, gpu=gpus)], labels=labels,
                         owner=owner, nodeSelector=gpu_sel, tolerations=[GPU_TOLERATION], restartPolicy="Never")
            self.bind(p, node)
        h = self.rs_hash()
        self.triton_hash = h
        for node in ("gpu-b-01", "gpu-c-01", "gpu-c-01"):
            p = self.pod("ml", f"triton-inference-{h}-{self.suffix()}",
                         [c("triton", "nvcr.io/nvidia/tritonserver:24.08-py3", "4", "16Gi", lmem="16Gi", gpu=1,
                            ports=[8000, 8001, 8002])],
                         labels={"app": "triton-inference", "pod-template-hash": h},
                         owner=("apps/v1", "ReplicaSet", f"triton-inference-{h}"), priorityClassName="high-priority",
                         nodeSelector=gpu_sel, tolerations=[GPU_TOLERATION])
            self.bind(p, node)

        # default namespace
        self.deployment_running("default", "hello-world", 3, c("hello", "registry.k8s.io/e2e-test-images/agnhost:2.52",
                                                               "50m", "64Mi", ports=[8080]), hash_="6b9d8f7c4d")
        p = self.pod("default", "busybox-debug", [c("busybox", "busybox:1.36", "10m", "16Mi",
                                                    command=["sleep", "infinity"])], labels={"run": "busybox-debug"})
        self.place(p, self.workers())

    def deployment_running(self, ns: str, app: str, n: int, container: dict, hash_: str | None = None) -> None:
        h = hash_ or self.rs_hash()
        for _ in range(n):
            p = self.pod(ns, f"{app}-{h}-{self.suffix()}", [dict(container)],
                         labels={"app": app, "pod-template-hash": h}, owner=("apps/v1", "ReplicaSet", f"{app}-{h}"))
            self.place(p, self.workers())

    # ------------------------------------------------------------------ pending pods
    def add_pending(self, p: dict) -> None:
        self.pending.append(p)

    def rs_pods(self, ns: str, app: str, n: int, containers: list[dict], hash_: str | None = None,
                **spec: Any) -> None:
        h = hash_ or self.rs_hash()
        for _ in range(n):
            cs = [dict(x) for x in containers]
            self.add_pending(self.pod(ns, f"{app}-{h}-{self.suffix()}", cs,
                                      labels={"app": app, "pod-template-hash": h},
                                      owner=("apps/v1", "ReplicaSet", f"{app}-{h}"), **spec))

    def make_pending(self) -> None:
        c = self.container
        zone_in = lambda zones: {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {  # noqa: E731
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones}]}]}}}
        gpu_sel = {"accelerator": "nvidia-a100"}

        # web: a new frontend rollout, spread evenly over zones
        self.rs_pods("web", "frontend", 6,
                     [c("nginx", "nginx:1.27", "250m", "256Mi", lcpu="500m", lmem="512Mi", ports=[8080])],
                     hash_="5c8d9f6b7",
                     topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                 "whenUnsatisfiable": "DoNotSchedule",
                                                 "labelSelector": {"matchLabels": {"app": "frontend"}}}])
        # web/api: scale-up, prefer not to share a node with another api replica
        self.rs_pods("web", "api", 4, [c("api", "ghcr.io/example/api:2.14.0", "500m", "512Mi", lmem="1Gi",
                                         ports=[8080])],
                     affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                             "labelSelector": {"matchLabels": {"app": "api"}}}}]}})
        # web/checkout: must stay in zones a and b (where the payment gateway peering is)
        self.rs_pods("web", "checkout", 3, [c("checkout", "ghcr.io/example/checkout:1.8.3", "300m", "384Mi",
                                              lmem="768Mi", ports=[8080])],
                     affinity=zone_in(["zone-a", "zone-b"]), priorityClassName="high-priority")
        # web/ingress: two more replicas with hostPorts 80/443: the three nodes already running one are out
        self.rs_pods("web", "ingress-nginx-controller", 2,
                     [c("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", "100m", "90Mi",
                        host_ports=[80, 443])], hash_=self.ingress_hash, priorityClassName="high-priority")
        # web/search: prefers the 16-core instance type
        self.rs_pods("web", "search", 4, [c("search", "ghcr.io/example/search:3.1.0", "1", "2Gi", lmem="3Gi")],
                     affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 50, "preference": {"matchExpressions": [
                             {"key": "node.kubernetes.io/instance-type", "operator": "In",
                              "values": ["standard-16"]}]}}]}})
        # web/static-assets: SSD nodes only
        self.rs_pods("web", "static-assets", 2, [c("nginx", "nginx:1.27", "100m", "128Mi", lmem="256Mi")],
                     nodeSelector={"disktype": "ssd"})
        # web/payments: an init container (DB migration) and a native sidecar (restartPolicy: Always)
        self.rs_pods("web", "payments", 2, [c("payments", "ghcr.io/example/payments:4.0.2", "500m", "512Mi",
                                              lmem="1Gi", ports=[8443])],
                     initContainers=[c("migrate", "ghcr.io/example/payments-migrate:4.0.2", "200m", "256Mi"),
                                     c("envoy", "envoyproxy/envoy:v1.31.2", "100m", "128Mi", lmem="256Mi",
                                       restartPolicy="Always")],
                     priorityClassName="high-priority")

        # data
        for name, image, cpu, mem, extra in [
            ("postgres-3", "postgres:16", "1", "2Gi", {"nodeSelector": {"disktype": "ssd"}}),
        ]:
            self.add_pending(self.pod("data", name, [c("postgres", image, cpu, mem, lcpu="2", lmem="4Gi",
                                                       ports=[5432])],
                                      labels={"app": "postgres", "statefulset.kubernetes.io/pod-name": name},
                                      owner=("apps/v1", "StatefulSet", "postgres"), **extra))
        for i in (3, 4):
            name = f"redis-{i}"
            self.add_pending(self.pod(
                "data", name, [c("redis", "redis:7.2", "250m", "1Gi", lmem="1Gi", ports=[6379])],
                labels={"app": "redis", "statefulset.kubernetes.io/pod-name": name},
                owner=("apps/v1", "StatefulSet", "redis"), nodeSelector={"disktype": "ssd"},
                affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "redis"}}}]}}))
        for i in range(3):
            name = f"elasticsearch-{i}"
            self.add_pending(self.pod(
                "data", name, [c("elasticsearch", "docker.elastic.co/elasticsearch/elasticsearch:8.15.0", "2", "8Gi",
                                 lmem="8Gi", ports=[9200, 9300])],
                labels={"app": "elasticsearch", "statefulset.kubernetes.io/pod-name": name},
                owner=("apps/v1", "StatefulSet", "elasticsearch"), nodeSelector={"disktype": "ssd"},
                affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "NotIn",
                         "values": ["standard-4", "standard-8"]}]}]}}},
                initContainers=[c("sysctl", "busybox:1.36", "10m", "16Mi",
                                  command=["sysctl", "-w", "vm.max_map_count=262144"],
                                  securityContext={"privileged": True})]))
        for i in range(2):
            name = f"clickhouse-{i}"
            self.add_pending(self.pod(
                "data", name, [c("clickhouse", "clickhouse/clickhouse-server:24.8", "2", "4Gi", lmem="8Gi",
                                 ports=[8123, 9000])],
                labels={"app": "clickhouse", "statefulset.kubernetes.io/pod-name": name},
                owner=("apps/v1", "StatefulSet", "clickhouse"),
                affinity={"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "example.com/cpu-generation", "operator": "Gt", "values": ["3"]}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 80, "preference": {"matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-c"]}]}}]}}))
        self.add_pending(self.pod("data", "analytics-nvme-0",
                                  [c("trino", "trinodb/trino:457", "4", "16Gi", lmem="16Gi")],
                                  labels={"app": "analytics-nvme", "statefulset.kubernetes.io/pod-name": "analytics-nvme-0"},
                                  owner=("apps/v1", "StatefulSet", "analytics-nvme"),
                                  nodeSelector={"disktype": "nvme"}))

        # data/pgbouncer: a connection pooler that must run next to a PostgreSQL replica (required
        # pod affinity on the hostname), preferring zone-a where the primary is
        self.rs_pods("data", "pgbouncer", 2, [c("pgbouncer", "bitnami/pgbouncer:1.23.1", "100m", "64Mi",
                                                lmem="128Mi", ports=[6432])],
                     affinity={"podAffinity": {
                         "requiredDuringSchedulingIgnoredDuringExecution": [
                             {"topologyKey": "kubernetes.io/hostname",
                              "labelSelector": {"matchLabels": {"app": "postgres"}}}],
                         "preferredDuringSchedulingIgnoredDuringExecution": [
                             {"weight": 50, "podAffinityTerm": {
                                 "topologyKey": "topology.kubernetes.io/zone",
                                 "labelSelector": {"matchLabels": {"app": "postgres",
                                                                   "statefulset.kubernetes.io/pod-name": "postgres-0"}}}}]}})
        # data/mongodb: keep the document store off the nodes that run PostgreSQL (required
        # anti-affinity) and spread its replicas over zones where possible (ScheduleAnyway)
        for i in range(3):
            name = f"mongodb-{i}"
            self.add_pending(self.pod(
                "data", name, [c("mongodb", "mongo:7.0", "500m", "1Gi", lmem="2Gi", ports=[27017])],
                labels={"app": "mongodb", "statefulset.kubernetes.io/pod-name": name},
                owner=("apps/v1", "StatefulSet", "mongodb"),
                affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname",
                     "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In",
                                                             "values": ["postgres", "mongodb"]}]}}]}},
                topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                            "whenUnsatisfiable": "ScheduleAnyway",
                                            "labelSelector": {"matchLabels": {"app": "mongodb"}}}]))

        # batch
        for job, n, image, cpu, mem, pc, extra in [
            ("etl-hourly", 10, "ghcr.io/example/etl:0.9.4", "500m", "1Gi", "low-priority", {}),
            ("spark-executor", 8, "apache/spark:3.5.2", "1", "4Gi", "low-priority", {}),
            ("billing-reconcile", 2, "ghcr.io/example/billing:2.3.1", "1", "2Gi", "high-priority", {}),
            ("video-transcode", 4, "jrottenberg/ffmpeg:7.0-ubuntu", "2", "4Gi", None, {
                "tolerations": [{"key": "node.example.com/spot", "operator": "Equal", "value": "true",
                                 "effect": "PreferNoSchedule"}],
                "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": {"matchExpressions": [
                        {"key": "node.example.com/lifecycle", "operator": "In", "values": ["spot"]}]}}]}}}),
        ]:
            jname = f"{job}-{self.rng.randint(28713000, 28713999)}"
            for _ in range(n):
                self.add_pending(self.pod("batch", f"{jname}-{self.suffix()}", [c("job", image, cpu, mem, lmem=mem)],
                                          labels={"app": job, "batch.kubernetes.io/job-name": jname},
                                          owner=("batch/v1", "Job", jname), priorityClassName=pc,
                                          restartPolicy="Never", **extra))
        for _ in range(2):
            jname = f"quota-gated-job-{self.rng.randint(28713000, 28713999)}"
            self.add_pending(self.pod("batch", f"{jname}-{self.suffix()}",
                                      [c("job", "python:3.12-slim", "500m", "512Mi", lmem="512Mi")],
                                      labels={"app": "quota-gated-job", "batch.kubernetes.io/job-name": jname},
                                      owner=("batch/v1", "Job", jname),
                                      schedulingGates=[{"name": "example.com/quota-check"}], restartPolicy="Never"))
        self.add_pending(self.pod("batch", "genome-assembly-28713000-qm4xt",
                                  [c("assembler", "ghcr.io/example/genome-assembler:1.2.0", "64", "120Gi",
                                     lmem="120Gi")],
                                  labels={"app": "genome-assembly", "batch.kubernetes.io/job-name": "genome-assembly-28713000"},
                                  owner=("batch/v1", "Job", "genome-assembly-28713000"), restartPolicy="Never"))

        # ml
        pt = "nvcr.io/nvidia/pytorch:24.08-py3"
        self.add_pending(self.pod("ml", "bert-finetune-1", [c("trainer", pt, "8", "64Gi", lmem="64Gi", gpu=2)],
                                  labels={"app": "bert-finetune"}, owner=("batch/v1", "Job", "bert-finetune"),
                                  nodeSelector=gpu_sel, tolerations=[GPU_TOLERATION], restartPolicy="Never"))
        self.rs_pods("ml", "triton-inference", 2,
                     [c("triton", "nvcr.io/nvidia/tritonserver:24.08-py3", "4", "16Gi", lmem="16Gi", gpu=1,
                        ports=[8000, 8001, 8002])], hash_=self.triton_hash, priorityClassName="high-priority",
                     nodeSelector=gpu_sel, tolerations=[GPU_TOLERATION])
        self.add_pending(self.pod("ml", "jupyter-alice", [c("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2024-09-16",
                                                            "2", "16Gi", lmem="16Gi", gpu=1, ports=[8888])],
                                  labels={"app": "jupyter", "user": "alice"}, tolerations=[GPU_TOLERATION]))
        for i in range(4):
            self.add_pending(self.pod("ml", f"hparam-sweep-trial-{i}", [c("trial", pt, "4", "32Gi", lmem="32Gi", gpu=1)],
                                      labels={"app": "hparam-sweep"}, owner=("batch/v1", "Job", "hparam-sweep"),
                                      priorityClassName="low-priority", nodeSelector=gpu_sel,
                                      tolerations=[GPU_TOLERATION], restartPolicy="Never"))
        self.add_pending(self.pod("ml", "llm-pretrain-worker-2", [c("trainer", pt, "48", "384Gi", lmem="384Gi", gpu=8)],
                                  labels={"app": "llm-pretrain"}, owner=("batch/v1", "Job", "llm-pretrain"),
                                  nodeSelector=gpu_sel, tolerations=[GPU_TOLERATION], restartPolicy="Never"))
        self.add_pending(self.pod("ml", "llama-finetune-worker-0", [c("trainer", pt, "32", "256Gi", lmem="256Gi", gpu=9)],
                                  labels={"app": "llama-finetune"}, owner=("batch/v1", "Job", "llama-finetune"),
                                  tolerations=[GPU_TOLERATION], restartPolicy="Never"))
        self.add_pending(self.pod("ml", "notebook-bob", [c("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2024-09-16",
                                                           "2", "8Gi", lmem="8Gi", gpu=1, ports=[8888])],
                                  labels={"app": "jupyter", "user": "bob"}))
        for i in range(3):
            self.add_pending(self.pod(
                "ml", f"data-prep-{i}", [c("prep", "ghcr.io/example/data-prep:0.4.0", "2", "8Gi", lmem="8Gi")],
                labels={"app": "data-prep"}, owner=("batch/v1", "Job", "data-prep"), restartPolicy="Never",
                initContainers=[c("fetch-dataset", "amazon/aws-cli:2.17.50", "1", "1Gi",
                                  command=["aws", "s3", "sync", "s3://datasets/imagenet", "/data"]),
                                c("log-shipper", "fluent/fluent-bit:3.1.7", "50m", "64Mi", lmem="128Mi",
                                  restartPolicy="Always")]))

        # default / kube-system
        self.rs_pods("default", "hello-world", 3, [c("hello", "registry.k8s.io/e2e-test-images/agnhost:2.52",
                                                     "50m", "64Mi", ports=[8080])], hash_="6b9d8f7c4d")
        self.rs_pods("default", "load-generator", 3, [c("k6", "grafana/k6:0.53.0", "500m", "256Mi", lmem="512Mi")],
                     priorityClassName="low-priority")
        self.rs_pods("default", "custom-scheduled-app", 1,
                     [c("app", "registry.k8s.io/pause:3.9", "100m", "64Mi")], schedulerName="other-scheduler")
        self.rs_pods("kube-system", "coredns", 1,
                     [c("coredns", "registry.k8s.io/coredns/coredns:v1.12.1", "100m", "70Mi", lmem="170Mi",
                        ports=[53, 9153])], hash_=self.coredns_hash, priorityClassName="system-cluster-critical",
                     tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}, CP_TOLERATION])
        for p in self.pending:  # pending pods carry the labels their controller would copy
            if p["metadata"]["namespace"] == "kube-system" and p["metadata"]["labels"].get("app") == "coredns":
                p["metadata"]["labels"] = {"k8s-app": "kube-dns", "pod-template-hash": self.coredns_hash}

    # ------------------------------------------------------------------ report
    def unfit(self) -> dict[str, str]:
        """Pending pods the default scheduler would try, that fit on no node as the cluster is now."""
        out = {}
        for p in self.pending:
            if p["spec"].get("schedulingGates") or p["spec"].get("schedulerName", "default-scheduler") != "default-scheduler":
                continue
            reasons = [infeasible(p, n, self) for n in self.nodes]
            if all(reasons):
                out[f"{p['metadata']['namespace']}/{p['metadata']['name']}"] = "; ".join(sorted(set(reasons)))  # type: ignore[arg-type]
        return out


# ---------------------------------------------------------------------- feasibility model

def parse_cpu(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def parse_mem_mi(q: str) -> int:
    for suf, mul in (("Gi", 1024), ("Mi", 1)):
        if q.endswith(suf):
            return int(q[: -len(suf)]) * mul
    raise ValueError(q)


def container_requests(c: dict) -> dict[str, int]:
    r = c.get("resources", {}).get("requests", {})
    return {"cpu": parse_cpu(r.get("cpu", "0")), "memory": parse_mem_mi(r.get("memory", "0Mi")),
            "gpu": int(r.get("nvidia.com/gpu", "0"))}


def pod_requests(pod: dict) -> dict[str, int]:
    """Upstream's formula: max(sum(containers) + sum(sidecars), each init + sidecars started before it)."""
    total = {"cpu": 0, "memory": 0, "gpu": 0}
    for c in pod["spec"]["containers"]:
        for k, v in container_requests(c).items():
            total[k] += v
    sidecars = {"cpu": 0, "memory": 0, "gpu": 0}
    init_max = {"cpu": 0, "memory": 0, "gpu": 0}
    for c in pod["spec"].get("initContainers", []):
        r = container_requests(c)
        if c.get("restartPolicy") == "Always":
            for k in sidecars:
                sidecars[k] += r[k]
                init_max[k] = max(init_max[k], sidecars[k])
        else:
            for k in init_max:
                init_max[k] = max(init_max[k], r[k] + sidecars[k])
    return {k: max(total[k] + sidecars[k], init_max[k]) for k in total}


def normalize_image(image: str) -> str:
    """``nginx:1.27`` → ``docker.io/library/nginx:1.27``, as the kubelet reports image names."""
    name, _, tag = image.partition(":") if "@" not in image else (image, "", "")
    first = name.split("/")[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    return f"{name}:{tag or 'latest'}" if "@" not in image else name


def host_ports_of(pod: dict) -> set[int]:
    return {p["hostPort"] for c in pod["spec"]["containers"] for p in c.get("ports", []) if p.get("hostPort")}


def tolerates(tols: list[dict], taint: dict) -> bool:
    for t in tols:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def match_expr(e: dict, labels: dict[str, str]) -> bool:
    op, key, vals = e["operator"], e["key"], e.get("values", [])
    if op == "In":
        return key in labels and labels[key] in vals
    if op == "NotIn":
        return key not in labels or labels[key] not in vals
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        if key not in labels:
            return False
        v, ref = int(labels[key]), int(vals[0])
        return v > ref if op == "Gt" else v < ref
    raise ValueError(op)


def selector_matches(sel: dict, labels: dict[str, str]) -> bool:
    """A label selector with matchLabels and In/NotIn/Exists/DoesNotExist expressions."""
    if not all(labels.get(k) == v for k, v in sel.get("matchLabels", {}).items()):
        return False
    return all(match_expr(e, labels) for e in sel.get("matchExpressions", []))


def infeasible(pod: dict, node: dict, g: Gen, *, ignore_unschedulable: bool = False) -> str | None:
    """Why ``pod`` cannot go on ``node`` right now (None if it can): a simplified filter chain."""
    spec = pod["spec"]
    name = node["metadata"]["name"]
    labels = node["metadata"]["labels"]
    if node["spec"].get("unschedulable") and not ignore_unschedulable:
        return "node is cordoned"
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return "node(s) didn't match Pod's node affinity/selector"
    req = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if req:
        fields = {"metadata.name": name}
        if not any(all(match_expr(e, labels) for e in t.get("matchExpressions", []))
                   and all(match_expr(e, fields) for e in t.get("matchFields", []))
                   for t in req["nodeSelectorTerms"]):
            return "node(s) didn't match Pod's node affinity/selector"
    for taint in node["spec"].get("taints", []):
        if taint["effect"] in ("NoSchedule", "NoExecute") and not tolerates(spec.get("tolerations", []), taint):
            if ignore_unschedulable and taint["key"] == "node.kubernetes.io/unschedulable":
                continue
            return f"untolerated taint {taint['key']}"
    if host_ports_of(pod) & g.ports[name]:
        return "node(s) didn't have free ports"
    ns = pod["metadata"]["namespace"]
    here = [q for q in g.node_pods[name] if q["metadata"]["namespace"] == ns]
    aff = ((spec.get("affinity") or {}).get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    for term in aff or []:
        assert term["topologyKey"] == "kubernetes.io/hostname"
        if not any(selector_matches(term["labelSelector"], q["metadata"].get("labels", {})) for q in here):
            return "node(s) didn't match pod affinity rules"
    anti = ((spec.get("affinity") or {}).get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    for term in anti or []:
        assert term["topologyKey"] == "kubernetes.io/hostname"
        if any(selector_matches(term["labelSelector"], q["metadata"].get("labels", {})) for q in here):
            return "node(s) didn't match pod anti-affinity rules"
    r = pod_requests(pod)
    f = g.free[name]
    short = [k for k in ("cpu", "memory", "gpu") if r[k] > f[k]] + (["pods"] if f["pods"] < 1 else [])
    if short:
        return "Insufficient " + ", ".join("nvidia.com/gpu" if k == "gpu" else k for k in short)
    return None


# ---------------------------------------------------------------------- output

def namespaces() -> list[dict]:
    out = []
    for ns in ("default", "kube-system", "web", "data", "batch", "ml"):
        out.append({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    return out


def priority_classes() -> list[dict]:
    def pc(name: str, value: int, desc: str, *, default: bool = False, never: bool = False) -> dict:
        d: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": name}, "value": value}
        if default:
            d["globalDefault"] = True
        if never:
            d["preemptionPolicy"] = "Never"
        d["description"] = desc
        return d

    return [
        pc("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
        pc("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
        pc("high-priority", 1000000, "User-facing services and their ingress."),
        pc("default-priority", 1000, "Pods without a priorityClassName get this value.", default=True),
        pc("low-priority", 100, "Batch work that may be preempted.", never=True),
    ]


def services() -> list[dict]:
    """Services selecting some of the workloads: the scheduler's system-default topology
    spreading (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) takes its selector from them."""
    def svc(ns: str, app: str, port: int) -> dict:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": ns},
                "spec": {"selector": {"app": app}, "ports": [{"port": port, "targetPort": port}]}}
    return [svc("web", "frontend", 8080), svc("web", "api", 8080), svc("web", "checkout", 8080),
            svc("data", "pgbouncer", 6432)]


def dump(objs: list[dict], title: str) -> str:
    head = (f"# {title}\n# Generated by examples/quickstart/generate.py (seed {SEED}); "
            "edit the script, not this file.\n")
    docs = [yaml.dump(o, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False, width=120)
            for o in objs]
    return head + "".join("---\n" + d for d in docs)


def build() -> Gen:
    g = Gen()
    g.make_nodes()
    g.make_running()
    g.finish_node_images()
    g.make_pending()
    unfit = g.unfit()
    assert set(unfit) == set(EXPECTED_UNFIT), f"unfit pods drifted: {unfit}"
    return g


def render_all() -> dict[str, str]:
    g = build()
    return {
        "00-namespaces.yaml": dump(namespaces(), "Namespaces"),
        "01-priorityclasses.yaml": dump(priority_classes(), "PriorityClasses (system-* ones are built in on a real cluster)"),
        "05-services.yaml": dump(services(), "Services (their selectors drive the default topology spreading)"),
        "10-nodes.yaml": dump(g.nodes, f"{len(g.nodes)} nodes in 3 zones"),
        "20-running-pods.yaml": dump(g.running, f"{len(g.running)} pods already bound (spec.nodeName set)"),
        "30-pending-pods.yaml": dump(g.pending, f"{len(g.pending)} pending pods (no spec.nodeName)"),
    }


def main(argv: list[str]) -> None:
    g = build()
    print(f"{len(g.nodes)} nodes, {len(g.running)} running pods, {len(g.pending)} pending pods")
    for k, v in g.unfit().items():
        print(f"  cannot fit: {k}: {v}")
    if "--check" in argv:
        return
    for name, text in render_all().items():
        (HERE / name).write_text(text)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main(sys.argv[1:])
