#!/usr/bin/env python
"""Differential fidelity: upstream kube-scheduler (v1.37.2 or v1.34.12) vs kubesched's engine.

    python tools/upstream/diff.py --seed 1 --clusters 3          # random clusters, seeds 1..3, v1.37
    python tools/upstream/diff.py --upstream-version 1.34 ...    # real v1.34.12, kubesched --emulated-version 1.34
    python tools/upstream/diff.py --feature-gates PodLevelResources=false --random-gates 0.3 ...
    python tools/upstream/diff.py --seed 7 --clusters 1 -v       # print every pod's comparison
    python tools/upstream/diff.py --seed 1 --dump /tmp/c1.yaml   # write the generated manifests
    python tools/upstream/diff.py --groups --seed 1 --clusters 3 # clusters with pod groups (v1.37 only)

For each generated cluster (seeded: nodes with cpu/memory/zones/taints, PriorityClasses, pods
with requests, nodeSelector, node affinity, tolerations, topology spread, pod anti-affinity,
host ports and priorities; and from a second seeded generator: pod-level resources on incoming
and pre-bound pods, host-port-heavy clusters where pods sharing a port preempt each other,
pre-bound pods holding the same host port on one node, topology spread with matchLabelKeys that
the API server merges into the stored selector; and from a third, on a share of the clusters, DRA:
a DeviceClass for a fake driver, per-node ResourceSlices, pods naming ResourceClaims of 1–2
devices, and at v1.37 pods requesting a DRA-backed extended resource) it starts a fresh etcd + kube-apiserver of
``--upstream-version`` (:mod:`kubesched.testing.upstream`, ``make upstream`` builds both
versions), creates the non-pod objects and the pre-bound pods, starts upstream kube-scheduler
with ``parallelism: 1`` and the default profile, then creates the pods **one by one**, waiting
for each to settle (bound; or unschedulable and stable for ``--settle`` seconds). A stand-in
kubelet gives bound pods a ``status.startTime`` (one virtual second apart) and finishes off
preemption victims that go Terminating with ``gracePeriodSeconds: 0``. ``--feature-gates``
(and ``--random-gates``' per-cluster picks) go to kube-apiserver, kube-scheduler and kubesched.

After each pod, the same step is replayed through kubesched's engine (a
:class:`~kubesched.scheduler.Scheduler` over the simulator's store, same configuration, decision
records on, ``FeatureGate(emulated_version=<upstream version>)`` with the same gates) from the
state upstream had just before it (its nodes and bound pods, as the API server returned them,
so admission defaults and merges are equal; the pod as stored; pending pods nominated to a node
handed to the engine's nominator, as upstream's queue holds them) plus that one pod, and the
outcomes are compared:

- bound on both: agree when upstream's node is one of kubesched's top final-score nodes; the
  ``exact-node`` column counts the pods bound to the very same node (v1.37 breaks score ties
  deterministically given the node order, upstream-v137 §2.6; v1.34 at random);
- unschedulable on both: the FailedScheduling messages must be equal;
- preemption: the same victims must be gone and the pod bound (node compared as above);
- DRA (areas ``dra``, ``dra-extended``): the engine gets the DeviceClasses, ResourceSlices and
  ResourceClaims as the API server stored them before the step (claims with the allocation and
  ``reservedFor`` upstream wrote, the ``<pod>-extended-resources-*`` claims it created, pods'
  ``extendedResourceClaimStatus``); a pod bound on both sides must have the same claims
  allocated, and on the very same node the same devices (:func:`compare_devices`). No
  kube-controller-manager runs: a deleted victim's claim keeps its allocation, on both sides.
  ``--run`` does not mirror claim allocations to its second API server (``kubesched run``
  allocates there on its own), so its DRA steps compare nodes only and may follow an earlier
  divergence;
- otherwise ``outcome`` disagreement.

``--groups`` generates clusters with PodGroups instead (:mod:`diff_groups` beside this file:
GenericWorkload, TopologyAwareWorkloadScheduling and PodGroupPreemptionPolicy on both sides,
kube-apiserver with ``--runtime-config=scheduling.k8s.io/v1beta1=true``); a step is a whole
group (its PodGroup, then all members, held until all are queued) or a single pod, settled as
:func:`diff_groups.settle_step` says, and compared as a whole: members bound, the PodGroup's
``PodGroupInitiallyScheduled`` condition, victims, messages, nodes (as a multiset, or within the
engine's top-score nodes). A disagreement agrees as a ``tie`` (``race``) when the engine, made
to take one of upstream's random choices (the condition race), gives upstream's outcome
(:func:`engine_group_compare`); ``kubesched run``'s only when the engine gives both outcomes
under two of its choices (:func:`run_group_compare`; ``--record`` keeps ``kubesched run``'s
outcome, ``--replay`` judges it again).

Prints one line per cluster and a summary per area (the features the pod used, plus
``gates:…`` for clusters with non-default gates) and overall; ``-v`` prints every pod. With
``--run`` the same pods also go to ``kubesched run`` (``--emulated-version``/``--feature-gates``
as upstream's) on a second API server. Exit code 0 when everything agreed, 1 otherwise, 2 on
bad flags or missing binaries.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
_SRC = os.path.join(_HERE, "..", "..", "src")
if os.path.isdir(_SRC):
    sys.path.insert(0, _SRC)
if _HERE not in sys.path:
    sys.path.insert(1, _HERE)  # diff_groups, beside this file

import diff_groups
import msgspec
import yaml

from kubesched.api.objects import Pod, decode
from kubesched.config import decode_config
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.framework.node_info import PodInfo
from kubesched.scheduler import Scheduler
from kubesched.sim.manifests import dump_yaml_all, parse_manifest_text
from kubesched.sim.simulate import build_store, mark_gated_pods
from kubesched.testing.upstream import (
    DEFAULT_VERSION,
    VERSIONS,
    ControlPlane,
    UpstreamNotBuilt,
    format_feature_gates,
    parse_feature_gates,
    pinned_version,
)

NS = "default"
#: with --dump-steps DIR: each kubesched step's input (the state upstream had + the pod) as YAML
DUMP_DIR: str | None = None
#: container images some nodes already hold (ImageLocality), with their sizes in bytes
IMAGES = {"docker.io/library/nginx:1.27": 70_000_000, "docker.io/library/redis:7.4": 140_000_000,
          "quay.io/prometheus/prometheus:v3.0.0": 900_000_000}
SCHED_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 1,
    "leaderElection": {"leaderElect": False},
    "clientConnection": {"qps": 5000, "burst": 5000},
}


# --------------------------------------------------------------------------- generator


#: gates a cluster may get (``--random-gates``), per upstream version: each is settable (not
#: locked, not PreAlpha) at that version and changes a scheduling path the generator exercises
#: (upstream-v137 §1.3). Entries are applied together (dependencies: MatchLabelKeysInPodTopologySpread
#: ← …SelectorMerge, kube_features.go defaultKubernetesFeatureGateDependencies).
GATE_CHOICES: dict[str, list[dict[str, bool]]] = {
    "common": [
        {"SchedulerPopFromBackoffQ": False},
        {"SchedulerAsyncPreemption": False},
        {"MatchLabelKeysInPodTopologySpread": False, "MatchLabelKeysInPodTopologySpreadSelectorMerge": False},
    ],
    "1.34": [{"PodLevelResources": False},
             {"NominatedNodeNameForExpectation": True}, {"ClearingNominatedNodeNameAfterBinding": True}],
    "1.37": [{"PodLevelResources": False, "InPlacePodLevelResourcesVerticalScaling": False,
              "PodLevelResourcesFixDefaulting": False, "PodLevelResourcesFixKubeletQOSClass": False},
             {"NominatedNodeNameForExpectation": False}, {"OpportunisticBatching": False},
             {"InterPodAffinityHostnameFastPath": True}],
}


def random_gates(seed: int, version: str, rate: float) -> dict[str, bool]:
    """Non-default gates for cluster ``seed``: with probability ``rate`` one or two entries of
    :data:`GATE_CHOICES` for ``version``; else none."""
    rnd = random.Random(f"gates-{seed}")
    if rate <= 0 or rnd.random() >= rate:
        return {}
    pool = GATE_CHOICES["common"] + GATE_CHOICES.get(version, [])
    out: dict[str, bool] = {}
    for entry in rnd.sample(pool, rnd.choice([1, 1, 2])):
        out.update(entry)
    return out


def _pod_level(rnd: random.Random, containers: list[dict[str, Any]]) -> dict[str, Any]:
    """Pod-level ``resources`` at least the containers' summed requests (validation.go
    validatePodResourceConsistency); now and then with limits, and now and then with the
    containers' own requests removed (pod-level only)."""
    cpu_m = sum(_milli(c.get("resources", {}).get("requests", {}).get("cpu", "0")) for c in containers)
    mem_mi = sum(_mebi(c.get("resources", {}).get("requests", {}).get("memory", "0")) for c in containers)
    req = {"cpu": f"{cpu_m + rnd.choice([0, 200, 1000])}m", "memory": f"{mem_mi + rnd.choice([0, 256, 1024])}Mi"}
    res: dict[str, Any] = {"requests": req}
    if rnd.random() < 0.3:
        res["limits"] = dict(req)
    if rnd.random() < 0.3:
        for c in containers:
            c.pop("resources", None)
    return res


def _milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def _mebi(q: str) -> int:
    units = {"Mi": 1, "Gi": 1024}
    return int(q[:-2]) * units[q[-2:]] if q[-2:] in units else int(q) // (1 << 20)


def generate(seed: int, version: str = DEFAULT_VERSION) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], dict[str, set[str]]]:
    """(non-pod objects and pre-bound pods, pods in creation order, pod name → areas it exercises).

    The first cut's draws come from ``Random(seed)`` unchanged; the additions (pod-level
    resources, pre-bound pods sharing host ports, host-port-heavy clusters, matchLabelKeys
    that the API server merges into the stored selector) from a second generator, so a seed
    keeps its original pods; DRA (:func:`_dra`: DeviceClasses, ResourceSlices, ResourceClaims
    and the pods using them, extended resources backed by devices at ``version`` 1.37) from a
    third, whose objects and pods are only added to the first two's."""
    rnd = random.Random(seed)
    ext = random.Random(f"ext-{seed}")
    port_heavy = ext.random() < 0.3
    zones = ["zone-a", "zone-b", "zone-c"]
    objs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    ]
    for i in range(rnd.randint(3, 6)):
        name = f"node-{i}"
        cpu = rnd.choice(["2", "4", "8"])
        mem = rnd.choice(["4Gi", "8Gi", "16Gi"])
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zones[i % 3],
                                                  "disk": rnd.choice(["ssd", "hdd"])}},
            "spec": {},
            "status": {"capacity": {"cpu": cpu, "memory": mem, "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": mem, "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]},
        }
        # images already pulled (ImageLocality), and now and then a cordoned node (NodeUnschedulable)
        node["status"]["images"] = [{"names": [img], "sizeBytes": size} for img, size in IMAGES.items()
                                    if rnd.random() < 0.4]
        if rnd.random() < 0.1:
            node["spec"]["unschedulable"] = True
        r = rnd.random()
        if r < 0.2:
            node["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        elif r < 0.35:
            node["spec"]["taints"] = [{"key": "soft", "value": "y", "effect": "PreferNoSchedule"}]
        objs.append(node)
    # PersistentVolumes bound to claims (VolumeBinding's bound-claim checks, VolumeZone,
    # VolumeRestrictions' ReadWriteOncePod): a PV pinned to a zone by node affinity, or
    # labelled with a zone, or to one host
    claims: list[str] = []
    for i in range(rnd.randint(0, 4)):
        pv_name, claim = f"pv-{i}", f"data-{i}"
        mode = rnd.choice(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"])
        pv: dict[str, Any] = {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv_name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": [mode], "storageClassName": "",
                     "csi": {"driver": "example.csi.k8s.io", "volumeHandle": pv_name},
                     "claimRef": {"namespace": NS, "name": claim}}}
        r = rnd.random()
        zone = rnd.choice(zones)
        if r < 0.4:
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}
        elif r < 0.7:
            pv["metadata"]["labels"] = {"topology.kubernetes.io/zone": zone}
        else:
            host = f"node-{rnd.randrange(3)}"
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}
        objs.append(pv)
        objs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": claim, "namespace": NS,
                                  "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                     "spec": {"accessModes": [mode], "storageClassName": "", "volumeName": pv_name,
                              "resources": {"requests": {"storage": "1Gi"}}}})
        claims.append(claim)
    pods: list[dict[str, Any]] = []
    areas: dict[str, set[str]] = {}
    for i in range(rnd.randint(10, 20)):
        name = f"pod-{i:02d}"
        app = rnd.choice(["web", "db", "cache"])
        a = {"resources"}
        image = rnd.choice([*IMAGES, "registry.k8s.io/pause:3.10"])
        if image in IMAGES:
            a.add("images")
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": image, "resources": {
            "requests": {"cpu": rnd.choice(["100m", "500m", "1", "1500m", "3"]),
                         "memory": rnd.choice(["128Mi", "1Gi", "2Gi", "6Gi"])}}}]}
        if rnd.random() < 0.2:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": rnd.choice(zones)}
            a.add("nodeselector")
        if rnd.random() < 0.25:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]
            a.add("taints")
        aff: dict[str, Any] = {}
        if rnd.random() < 0.15:
            aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}
            a.add("nodeaffinity")
        elif rnd.random() < 0.2:
            aff["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rnd.choice([1, 50, 100]), "preference": {"matchExpressions": [
                    {"key": "disk", "operator": "In", "values": ["hdd"]}]}}]}
            a.add("nodeaffinity")
        if rnd.random() < 0.15:
            aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}
            a.add("interpodaffinity")
        elif rnd.random() < 0.15:
            aff["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}},
                                                   "topologyKey": "topology.kubernetes.io/zone"}}]}
            a.add("interpodaffinity")
        if aff:
            spec["affinity"] = aff
        if rnd.random() < 0.2:
            spec["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": rnd.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"app": app}}}]
            a.add("spreading")
            if ext.random() < 0.5:
                # merged by the API server into labelSelector as `rev In (<pod's rev>)`
                # (pkg/registry/core/pod/strategy.go applyMatchLabelKeysAndMismatchLabelKeys)
                spec["topologySpreadConstraints"][0]["matchLabelKeys"] = ["rev"]
                a.add("matchlabelkeys")
        if rnd.random() < 0.1:
            spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
            a.add("ports")
        elif port_heavy and ext.random() < 0.5:
            spec["containers"][0]["ports"] = [_host_port(ext)]
            a.add("ports")
        if ext.random() < 0.15:
            spec["resources"] = _pod_level(ext, spec["containers"])
            a.add("podlevel")
        if claims and rnd.random() < 0.2:
            spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": rnd.choice(claims)}}]
            a.add("volumes")
        if rnd.random() < 0.05:
            spec["schedulingGates"] = [{"name": "example.com/gate"}]
            a.add("gates")
        r = rnd.random()
        if r < 0.25:
            spec["priorityClassName"] = "high"
            a.add("priorities")
        elif r < 0.5:
            spec["priorityClassName"] = "low"
            a.add("priorities")
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "namespace": NS,
                                  "labels": {"app": app, "rev": ext.choice(["r1", "r2"])}}, "spec": spec})
        areas[name] = a
    node_names = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    objs += _prebound(ext, node_names, port_heavy)
    dra_objs, dra_pods, dra_areas = _dra(seed, version, node_names)
    objs += dra_objs
    for pos, p in sorted(dra_pods, key=lambda t: t[0], reverse=True):
        pods.insert(min(pos, len(pods)), p)
    areas.update(dra_areas)
    return objs, pods, areas


def _host_port(rnd: random.Random) -> dict[str, Any]:
    """A container port with a host port from a small set, so that pods share them."""
    port: dict[str, Any] = {"containerPort": 80, "hostPort": rnd.choice([8080, 8080, 9090])}
    if rnd.random() < 0.2:
        port["protocol"] = "UDP"
    if rnd.random() < 0.2:
        port["hostIP"] = "127.0.0.1"
    return port


def _prebound(rnd: random.Random, nodes: list[str], port_heavy: bool) -> list[dict[str, Any]]:
    """0–3 low-priority pods created already bound (``spec.nodeName``, as a kubelet's static or
    a pre-existing pod): small requests, some with pod-level resources, and in host-port-heavy
    clusters two on one node holding the same host port — which only a bypass of the scheduler
    makes possible; upstream's HostPortInfo is a set, so preempting one of them frees the port
    for both (upstream-v137 §8b)."""
    out: list[dict[str, Any]] = []
    n = rnd.randint(0, 3)
    shared = port_heavy and n >= 2
    node0 = rnd.choice(nodes)
    for i in range(n):
        node = node0 if shared and i < 2 else rnd.choice(nodes)
        c: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {
            "cpu": rnd.choice(["100m", "250m", "500m"]), "memory": rnd.choice(["128Mi", "512Mi"])}}}
        if shared and i < 2:
            c["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        spec: dict[str, Any] = {"nodeName": node, "priorityClassName": "low", "containers": [c]}
        if rnd.random() < 0.4:
            spec["resources"] = _pod_level(rnd, spec["containers"])
        out.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"existing-{i}", "namespace": NS,
                                 "labels": {"app": rnd.choice(["web", "db", "cache"]), "rev": "r1"}},
                    "spec": spec})
    return out


# --------------------------------------------------------------------------- DRA (third stream)

DRIVER = "gpu.example.com"
#: the DeviceClass behind the DRA-backed extended resource (DRAExtendedResource, GA in 1.37)
EXT_CLASS, EXT_RESOURCE = "gpu-ext.example.com", "example.com/gpu"
#: share of the clusters that get DRA objects and pods
DRA_SHARE = 0.4


def _dra(seed: int, version: str, nodes: list[str]) -> tuple[list[dict[str, Any]], list[tuple[int, dict[str, Any]]],
                                                             dict[str, set[str]]]:
    """(DRA objects, (position, pod) pairs to insert into the pod sequence, areas) for cluster
    ``seed`` from its own generator ``Random("dra-<seed>")``, on :data:`DRA_SHARE` of the clusters.

    A DeviceClass ``gpu.example.com`` selecting the fake driver by CEL; one ResourceSlice
    (``resource.k8s.io/v1``) per node on some nodes, 1–4 devices with a ``model``/``index``
    attribute and a ``memory`` capacity; 1–5 pods ``dra-NN`` each naming its own ResourceClaim
    ``dra-NN-gpu`` (created up front, unallocated: no kube-controller-manager runs, so no
    ResourceClaimTemplates) with one ExactCount request of 1–2 devices, now and then a CEL
    selector on an attribute or the capacity. At v1.37 also (DRAExtendedResource, GA there; alpha
    and off at 1.34, whose API server drops ``extendedResourceName``) a DeviceClass
    ``gpu-ext.example.com`` with ``extendedResourceName: example.com/gpu`` and 1–3 pods ``gpu-NN``
    requesting ``example.com/gpu`` that no node advertises: the scheduler allocates devices and
    writes the ``<pod>-extended-resources-*`` claim itself in PreBind
    (dynamicresources.go, upstream-v137 §2.x)."""
    rnd = random.Random(f"dra-{seed}")
    if rnd.random() >= DRA_SHARE:
        return [], [], {}
    sel = {"cel": {"expression": f'device.driver == "{DRIVER}"'}}
    objs: list[dict[str, Any]] = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
         "spec": {"selectors": [sel]}}]
    with_ext = version != "1.34" and rnd.random() < 0.6
    if with_ext:
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": EXT_CLASS},
                     "spec": {"selectors": [sel], "extendedResourceName": EXT_RESOURCE}})
    for node in nodes:
        if rnd.random() >= 0.6:
            continue
        devices = []
        for d in range(rnd.randint(1, 4)):
            devices.append({"name": f"gpu-{d}",
                            "attributes": {"model": {"string": rnd.choice(["a100", "h100"])}, "index": {"int": d}},
                            "capacity": {"memory": {"value": rnd.choice(["40Gi", "80Gi"])}}})
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": f"{node}-gpu"},
                     "spec": {"driver": DRIVER, "nodeName": node,
                              "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                              "devices": devices}})
    pods: list[tuple[int, dict[str, Any]]] = []
    areas: dict[str, set[str]] = {}

    def pod(name: str, container: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": [container], **extra}
        r = rnd.random()
        if r < 0.25:
            spec["priorityClassName"] = rnd.choice(["high", "low"])
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": NS, "labels": {"app": "gpu", "rev": "r1"}}, "spec": spec}

    for i in range(rnd.randint(1, 5)):
        name, claim = f"dra-{i:02d}", f"dra-{i:02d}-gpu"
        exactly: dict[str, Any] = {"deviceClassName": DRIVER, "allocationMode": "ExactCount",
                                   "count": rnd.choice([1, 1, 2])}
        r = rnd.random()
        if r < 0.25:
            model = rnd.choice(["a100", "h100"])
            exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
        elif r < 0.4:
            exactly["selectors"] = [{"cel": {
                "expression": f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0'}}]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": claim, "namespace": NS},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}})
        c = {"name": "c", "image": "registry.k8s.io/pause:3.10",
             "resources": {"requests": {"cpu": rnd.choice(["100m", "500m"]), "memory": "128Mi"},
                           "claims": [{"name": "gpu"}]}}
        at = rnd.randint(0, 20)
        pods.append((at, pod(name, c, {"resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]})))
        areas[name] = {"resources", "dra"}
    if with_ext:
        for i in range(rnd.randint(1, 3)):
            name = f"gpu-{i:02d}"
            n = str(rnd.choice([1, 1, 2]))
            c = {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi", EXT_RESOURCE: n},
                               "limits": {EXT_RESOURCE: n}}}
            pods.append((rnd.randint(0, 20), pod(name, c, {})))
            areas[name] = {"resources", "dra-extended"}
    return objs, pods, areas


# --------------------------------------------------------------------------- upstream side


def _api_path(obj: dict[str, Any]) -> str:
    kind = obj["kind"]
    if kind == "PriorityClass":
        return "/apis/scheduling.k8s.io/v1/priorityclasses"
    if kind == "Node":
        return "/api/v1/nodes"
    if kind == "PersistentVolume":
        return "/api/v1/persistentvolumes"
    if kind == "PersistentVolumeClaim":
        return f"/api/v1/namespaces/{obj['metadata'].get('namespace', NS)}/persistentvolumeclaims"
    if kind == "Pod":
        return f"/api/v1/namespaces/{obj['metadata'].get('namespace', NS)}/pods"
    if kind in DRA_PATHS:
        return DRA_PATHS[kind]
    if kind == "ResourceClaim":
        return f"/apis/resource.k8s.io/v1/namespaces/{obj['metadata'].get('namespace', NS)}/resourceclaims"
    raise ValueError(f"unsupported kind {kind}")


DRA_PATHS = {"DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
             "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices"}


def _stored(cp: ControlPlane, kind: str, path: str) -> list[dict[str, Any]]:
    """The objects at ``path`` as the API server stores them (``managedFields`` dropped)."""
    out = []
    for item in cp.request("GET", path)[2]["items"]:
        item["metadata"].pop("managedFields", None)
        out.append({"apiVersion": "resource.k8s.io/v1" if kind in (*DRA_PATHS, "ResourceClaim") else "v1",
                    "kind": kind, **item})
    return out


def _claims(cp: ControlPlane) -> list[dict[str, Any]]:
    """The ResourceClaims as stored: with ``status.allocation``/``reservedFor`` as upstream's
    DynamicResources wrote them, and the ``<pod>-extended-resources-*`` claims it created."""
    return _stored(cp, "ResourceClaim", f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims")


def allocations(pod: dict[str, Any] | None, claims: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Pod entry → its claim's allocated devices (``request driver/pool/device``, sorted) for
    each claim of ``pod`` that is allocated: ``spec.resourceClaims`` naming a claim, and the
    extended-resource claim named by ``status.extendedResourceClaimStatus`` (key ``extended``).
    ``claims`` maps claim name → stored claim."""
    if pod is None:
        return {}
    names = {rc["name"]: rc["resourceClaimName"] for rc in pod["spec"].get("resourceClaims") or []
             if rc.get("resourceClaimName")}
    ext = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    if ext.get("resourceClaimName"):
        names["extended"] = ext["resourceClaimName"]
    out: dict[str, list[str]] = {}
    for entry, cname in names.items():
        alloc = ((claims.get(cname) or {}).get("status") or {}).get("allocation")
        if alloc:
            out[entry] = sorted(f"{r['request']} {r['driver']}/{r['pool']}/{r['device']}"
                                for r in (alloc.get("devices") or {}).get("results") or [])
    return out


def _create(cp: ControlPlane, obj: dict[str, Any]) -> dict[str, Any]:
    status, _, body = cp.request("POST", _api_path(obj), obj)
    if status != 201:
        raise RuntimeError(f"create {obj['kind']} {obj['metadata']['name']}: HTTP {status}: {body}")
    return dict(body)


def _pods(cp: ControlPlane) -> dict[str, dict[str, Any]]:
    _, _, lst = cp.request("GET", f"/api/v1/namespaces/{NS}/pods")
    return {p["metadata"]["name"]: p for p in lst["items"]}


def _delete_now(cp: ControlPlane, name: str) -> None:
    """Delete pod ``name`` with ``gracePeriodSeconds: 0`` (gone at once, as a kubelet confirms)."""
    cp.request("DELETE", f"/api/v1/namespaces/{NS}/pods/{name}",
               {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})


def _set_start_time(cp: ControlPlane, name: str, start: str) -> tuple[int, Any]:
    """Patch pod ``name``'s ``status.startTime`` as a kubelet would; (HTTP status, answer)."""
    status, _, got = cp.request("PATCH", f"/api/v1/namespaces/{NS}/pods/{name}/status",
                                {"status": {"startTime": start}},
                                headers={"Content-Type": "application/strategic-merge-patch+json"})
    return status, got


def _finish_terminating(cp: ControlPlane, pods: dict[str, dict[str, Any]]) -> int:
    n = 0
    for name, p in pods.items():
        if p["metadata"].get("deletionTimestamp"):
            _delete_now(cp, name)
            n += 1
    return n


OBSERVE_S = 0.5
"""How long ``settle`` lets kube-scheduler's informers observe deletions it just made before the
step ends: the next pod is compared against the API server's state, which must be the state
upstream's cache holds when that pod arrives (a victim deleted in the last poll and still in
the cache made upstream preempt on v1.34.12 seed 171 pod-07 where the engine saw a free node)."""


class FakeKubelet:
    """Gives every bound pod a ``status.startTime``, as a kubelet would, from a virtual clock
    that ticks one second per pod: preemption orders victims by start time
    (``MoreImportantPod``), and upstream substitutes ``time.Now()`` for a missing one, which
    makes its order among equal-priority victims arbitrary (pkg/scheduler/util/utils.go
    ``GetPodStartTime``)."""

    def __init__(self) -> None:
        self.tick = 0

    def start(self, cp: ControlPlane, pods: dict[str, dict[str, Any]]) -> None:
        for name, p in sorted(pods.items()):
            if p["spec"].get("nodeName") and not p.get("status", {}).get("startTime"):
                self.tick += 1
                t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1767225600 + self.tick))
                status, got = _set_start_time(cp, name, t)
                if status == 200:
                    pods[name] = got


def _cond(p: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in p.get("status", {}).get("conditions") or [] if c["type"] == "PodScheduled"), None)


def settle(cp: ControlPlane, name: str, stable: float, timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    """Wait until pod ``name`` is bound, or unschedulable without a pending nomination and
    unchanged for ``stable`` seconds — 10 s once it has preempted (victims gone or nominated),
    to outlast its backoff before the retry that binds it; finishes Terminating victims
    meanwhile. Returns all pods."""
    deadline = time.monotonic() + timeout
    last_rv, since = "", time.monotonic()
    initial = set(_pods(cp)) - {name}
    preempted = False
    deleted_at = -1.0

    def done(pods: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        wait = deleted_at + OBSERVE_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return pods

    while True:
        pods = _pods(cp)
        if _finish_terminating(cp, pods):
            deleted_at = time.monotonic()
        p = pods.get(name)
        if p is None:
            return done(pods)
        if p["spec"].get("nodeName"):
            return done(pods)
        c = _cond(p)
        rv = p["metadata"]["resourceVersion"]
        if rv != last_rv:
            last_rv, since = rv, time.monotonic()
        nominated = p.get("status", {}).get("nominatedNodeName")
        terminating = any(q["metadata"].get("deletionTimestamp") for q in pods.values())
        preempted = preempted or bool(nominated) or terminating or bool(initial - set(pods))
        need = max(stable, 10.0) if preempted else stable
        if c and c["status"] == "False" and not nominated and not terminating and time.monotonic() - since >= need:
            return done(pods)
        if time.monotonic() > deadline:
            return done(pods)
        time.sleep(0.1)


# --------------------------------------------------------------------------- comparison


@dataclass
class Result:
    pod: str
    areas: set[str]
    agree: bool
    kind: str  # "bound", "unschedulable", "preempted", or the disagreement kind
    detail: str = ""
    #: bound on both sides: the very same node (None when not bound on both)
    exact: bool | None = None


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)

    def add(self, r: Result) -> None:
        self.results.append(r)


def _strip(p: dict[str, Any]) -> dict[str, Any]:
    md = {k: v for k, v in p["metadata"].items() if k in ("name", "namespace", "labels", "uid", "creationTimestamp")}
    out = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": dict(p["spec"])}
    status = p.get("status") or {}
    # the start time (preemption's victim order) and, for DRA, the claim statuses the
    # scheduler wrote (extendedResourceClaimStatus names the claim it created in PreBind)
    kept = {k: status[k] for k in ("startTime", "extendedResourceClaimStatus", "resourceClaimStatuses")
            if status.get(k)}
    if kept:
        out["status"] = kept
    return out


def kubesched_step(config: Any, objs: list[dict[str, Any]], nodes: list[dict[str, Any]],
                   bound: list[dict[str, Any]], pod: dict[str, Any],
                   nominated: list[dict[str, Any]] | None = None,
                   features: FeatureGate | None = None,
                   start_index: int = 0,
                   allocated: dict[str, list[str]] | None = None) -> tuple[str | None, str, list[str], list[str], int]:
    """(node, message, top-score nodes, victims, next start index) of ``pod`` scheduled by
    kubesched's engine (at ``features``' emulated version and gates; default v1.37's) from the
    given state.

    ``start_index`` is the engine's ``nextStartNodeIndex`` to begin with (schedule_one.go
    findNodesThatPassFilters: the Filter loop starts there and it advances by the nodes processed,
    which is fewer than all when a PreFilterResult narrows the nodes); the caller carries it
    from step to step, as upstream's one scheduler does — the order of the feasible nodes decides
    v1.37's heap tie-break (exact node). Upstream's retries of other pending pods move its index
    too; those are not replayed here.

    ``nominated`` are the pending pods upstream holds nominated to a node (their
    ``status.nominatedNodeName`` set): they are handed to the engine's nominator only, as
    upstream's queue holds them — counted by Filter on their node when their priority is at
    least the pod's (``RunFilterPluginsWithNominatedPods``), invisible to Score — and are not
    scheduled in this step.

    ``objs`` carry the DRA objects as the API server stored them (ResourceClaims with the
    allocation upstream wrote, fetched before this step); ``allocated``, when given, receives the
    pod's allocated claims as :func:`allocations` reads them from the engine's store."""
    pending = _strip(pod)
    pending["spec"].pop("nodeName", None)
    docs = ([o for o in objs if o["kind"] not in ("Node", "Pod")] + nodes + [_strip(b) for b in bound]
            + [pending])
    text = dump_yaml_all(docs)  # as kubectl would read it back (y/n stay strings)
    if DUMP_DIR:
        os.makedirs(DUMP_DIR, exist_ok=True)
        with open(os.path.join(DUMP_DIR, f"{pod['metadata']['name']}.yaml"), "w") as f:
            f.write(text)
    raws = parse_manifest_text(text, "<diff>")
    store, bound_pods, pending_pods, node_objs = build_store(raws)
    sched = Scheduler(config, client=store, lister=store, clock=ManualClock(), seed=0, record=True,
                      features=features)
    sched.sampler.next_start_node_index = start_index
    store.scheduler = sched
    for n, raw in node_objs:
        store.add("Node", n, raw)
    for p, raw in bound_pods:
        store.add("Pod", p, raw)
    for q in nominated or []:
        qpod = decode(Pod, {**_strip(q), "status": {"nominatedNodeName": q["status"]["nominatedNodeName"]}})
        if qpod.spec.priority is None:
            qpod = msgspec.structs.replace(qpod, spec=msgspec.structs.replace(qpod.spec, priority=q["spec"].get("priority", 0)))
        sched.queue.add_nominated_pod(PodInfo(qpod), q["status"]["nominatedNodeName"])
    records: dict[str, Any] = {}

    def on_attempt(a: Any) -> None:
        if a.record is not None:
            records[a.pod_key] = a.record

    sched.on_attempt = on_attempt
    for p, raw in pending_pods:
        store.add("Pod", p, raw)
    sched.run_until_idle(after_each=store.flush)
    mark_gated_pods(sched, store)
    store.flush()
    key = f"{NS}/{pod['metadata']['name']}"
    cur = store.pods.get(key)
    node = cur.spec.node_name or None if cur is not None else None
    msg = next((c.message for c in cur.status.conditions if c.type == "PodScheduled" and c.status == "False"),
               "") if cur is not None else ""
    rec = records.get(key)
    top: list[str] = [rec.selected_node] if rec is not None and rec.selected_node else []
    if rec is not None and rec.final_score:
        fs = rec.final_score
        scores = {n: (v if isinstance(v, (int, float)) else sum(v.values())) for n, v in fs.items()}
        best = max(scores.values())
        top = sorted(n for n, v in scores.items() if v == best)
    if allocated is not None and cur is not None:
        ext = cur.status.extended_resource_claim_status
        view = {"spec": {"resourceClaims": [{"name": rc.name, "resourceClaimName": rc.resource_claim_name}
                                            for rc in cur.spec.resource_claims or []]},
                "status": {"extendedResourceClaimStatus": ext} if ext else {}}
        allocated.update(allocations(view, {c["metadata"]["name"]: c for c in store.list("ResourceClaim", NS)}))
    remaining = {p.metadata.name for p in store.pods.values()}
    victims = sorted(b["metadata"]["name"] for b in bound if b["metadata"]["name"] not in remaining)
    return node, msg, top, victims, sched.sampler.next_start_node_index


def mirror_bound(cp: ControlPlane, want: list[dict[str, Any]]) -> None:
    """Make the pods of ``cp`` exactly ``want`` (upstream's bound, non-terminating pods), each
    bound to the same node with the same ``status.startTime``: pods elsewhere or extra are
    deleted at once (grace 0), missing ones created with ``spec.nodeName``."""
    have = _pods(cp)
    by_name = {p["metadata"]["name"]: p for p in want}
    for name, p in list(have.items()):
        w = by_name.get(name)
        if w is None or p["spec"].get("nodeName") != w["spec"]["nodeName"] or p["metadata"].get("deletionTimestamp"):
            _delete_now(cp, name)
            have.pop(name)
    for name, w in sorted(by_name.items()):
        start = (w.get("status") or {}).get("startTime")
        if name in have:
            # bound here by kubesched run itself: no kubelet gave it upstream's start time
            if start and (have[name].get("status") or {}).get("startTime") != start:
                _set_start_time(cp, name, start)
            continue
        body = _strip(w)
        body["metadata"] = {k: v for k, v in body["metadata"].items() if k in ("name", "namespace", "labels")}
        body.pop("status", None)
        _create(cp, body)
        if start:
            _set_start_time(cp, name, start)


def compare(name: str, areas: set[str], up: tuple[str | None, str, list[str]],
            other: tuple[str | None, str, list[str]], top: list[str], who: str) -> Result:
    """Compare one pod's outcome upstream (node, message, victims) with ``who``'s: nodes agree
    when both are in the engine's top-score set (or equal), messages must be equal, victims
    the same."""
    up_node, up_msg, up_victims = up
    ks_node, ks_msg, ks_victims = other

    def same_node() -> bool:
        return up_node == ks_node or (up_node in top and ks_node in top)

    exact = up_node == ks_node if up_node and ks_node else None
    if up_victims or ks_victims:
        ok = up_victims == ks_victims and bool(up_node) == bool(ks_node) and (not up_node or same_node())
        return Result(name, areas | {"preemption"}, ok, "preempted" if ok else "preemption",
                      f"upstream victims {up_victims} node {up_node}; {who} victims {ks_victims} node {ks_node} "
                      f"top {top}", exact)
    if up_node and ks_node:
        ok = same_node()
        return Result(name, areas, ok, "bound" if ok else "node",
                      f"upstream {up_node}; {who} {ks_node}, top {top}" + ("" if exact else " (not the same node)"),
                      exact)
    if not up_node and not ks_node:
        ok = up_msg == ks_msg
        return Result(name, areas, ok, "unschedulable" if ok else "message",
                      f"upstream: {up_msg!r}" + ("" if ok else f"\n      {who}: {ks_msg!r}"))
    return Result(name, areas, False, "outcome",
                  f"upstream node {up_node} msg {up_msg!r}; {who} node {ks_node} msg {ks_msg!r}")


def compare_devices(r: Result, up_alloc: dict[str, list[str]], ks_alloc: dict[str, list[str]], who: str) -> Result:
    """A pod bound on both sides: its claims must be allocated on both (the same entries); on
    the very same node also the same devices. Upstream's structured allocator
    (``structured/internal/*/allocator_*.go`` ``allocateOne``/``allocateDevice``, e.g.
    stable/allocator_stable.go:796,1133) walks pools, slices and devices in order and takes the
    first that fits, with no random or score tie-break, so on one node with the same slices and
    the same claims allocated before, the devices are determined (no ``math/rand`` anywhere in
    k8s.io/dynamic-resource-allocation@v0.37.2 ``structured/``, whichever of the stable, incubating
    or experimental allocators ``NewAllocator`` picks); on different (tied) nodes they cannot be
    compared."""
    if not r.agree or (not up_alloc and not ks_alloc):
        return r
    if sorted(up_alloc) != sorted(ks_alloc):
        return Result(r.pod, r.areas, False, "claims",
                      f"{r.detail}; allocated claims upstream {up_alloc}, {who} {ks_alloc}", r.exact)
    if r.exact and up_alloc != ks_alloc:
        return Result(r.pod, r.areas, False, "devices",
                      f"{r.detail}; devices upstream {up_alloc}, {who} {ks_alloc}", r.exact)
    r.detail += f"; devices {up_alloc}" + ("" if r.exact else f", {who} {ks_alloc} (not compared)")
    return r


def run_cluster(seed: int, settle_s: float, verbose: bool, report: Report,
                run_report: Report | None = None, *, version: str = "1.37",
                gates: dict[str, bool] | None = None) -> None:
    """One generated cluster: upstream ``version`` live, kubesched's engine per step at the
    matching emulated version, and with ``run_report`` also ``kubesched run`` live on a second
    API server. ``gates`` go to kube-apiserver, kube-scheduler and kubesched alike."""
    objs, pods, areas = generate(seed, version)
    gates = dict(gates or {})
    features = FeatureGate.from_flags(emulated_version=version, feature_gates=format_feature_gates(gates))
    config = decode_config(SCHED_CONFIG, features=features)
    if gates:
        tag = "gates:" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))
        for a in areas.values():
            a.add(tag)
    cp = ControlPlane.start(version=version, feature_gates=gates)
    run_cp: ControlPlane | None = None
    run_agree = 0
    try:
        for o in objs:
            _create(cp, o)
        if run_report is not None:
            run_cp = ControlPlane.start(version=version, feature_gates=gates)
            for o in objs:
                _create(run_cp, o)
            run_args = [] if version == DEFAULT_VERSION else [f"--emulated-version={version}"]
            if gates:
                run_args.append(f"--feature-gates={format_feature_gates(gates)}")
            run_cp.start_kubesched_run(SCHED_CONFIG, extra_args=run_args)
        nodes_api = cp.request("GET", "/api/v1/nodes")[2]["items"]
        nodes = [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {k: v for k, v in n["metadata"].items() if k in ("name", "labels")},
                  "spec": n.get("spec", {}), "status": n["status"]} for n in nodes_api]
        # PVs and claims as the API server stored them (no PV controller runs: claims keep an
        # empty status, bound by volumeName + the bind-completed annotation)
        stored = [o for o in objs if o["kind"] == "PriorityClass"]
        for kind, path in (("PersistentVolume", "/api/v1/persistentvolumes"),
                           ("PersistentVolumeClaim", f"/api/v1/namespaces/{NS}/persistentvolumeclaims")):
            for item in cp.request("GET", path)[2]["items"]:
                item["metadata"].pop("managedFields", None)
                stored.append({"apiVersion": "v1", "kind": kind, **item})
        # DeviceClasses and ResourceSlices as stored (at 1.34 the API server drops what its gates
        # do not serve); the ResourceClaims are fetched again before every step
        dra = any(o["kind"] in DRA_PATHS for o in objs)
        if dra:
            for kind, path in DRA_PATHS.items():
                stored += _stored(cp, kind, path)
        cp.start_kube_scheduler(SCHED_CONFIG)
        kubelet = FakeKubelet()
        kubelet.start(cp, _pods(cp))  # the pre-bound pods' start times
        before = _pods(cp)
        agree = total = start_index = 0
        for pod in pods:
            name = pod["metadata"]["name"]
            before = _pods(cp)  # fresh: a pod may have been bound since the last step settled
            bound_before = [p for p in before.values() if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")]
            claims_before = _claims(cp) if dra else []
            created = _create(cp, pod)
            after = settle(cp, name, settle_s)
            kubelet.start(cp, after)
            up = after.get(name)
            up_node = up["spec"].get("nodeName") if up else None
            up_cond = _cond(up) if up else None
            up_msg = up_cond.get("message", "") if up_cond and up_cond["status"] == "False" else ""
            # victims: gone, or still terminating (deleted by preemption, grace period running)
            up_victims = sorted(n for n in (p["metadata"]["name"] for p in bound_before)
                                if n not in after or after[n]["metadata"].get("deletionTimestamp"))
            # upstream's queue holds pending pods nominated to a node; its Filter counts those
            # whose priority is at least the incoming pod's (RunFilterPluginsWithNominatedPods)
            nominated = [
                p for p in before.values()
                if not p["spec"].get("nodeName") and p.get("status", {}).get("nominatedNodeName")
                and not p["metadata"].get("deletionTimestamp")
            ]
            ks_alloc: dict[str, list[str]] = {}
            ks_node, ks_msg, top, ks_victims, start_index = kubesched_step(
                config, stored + claims_before, nodes, bound_before, created, nominated, features, start_index,
                ks_alloc)
            r = compare(name, areas[name], (up_node, up_msg, up_victims), (ks_node, ks_msg, ks_victims),
                        top, "kubesched")
            if dra and up_node and ks_node:
                up_alloc = allocations(up, {c["metadata"]["name"]: c for c in _claims(cp)})
                r = compare_devices(r, up_alloc, ks_alloc, "kubesched")
            # another pending pod (unschedulable earlier) was bound while this one settled — e.g.
            # retried when a victim left — so upstream's outcome is not this pod's alone: the step
            # is reported as "raced", not compared
            # — or preempted (got a new nominatedNodeName) and so evicted victims upstream's
            # victims list would pin on this pod (v1.34.12 seed 326 pod-14: pod-12, retried when
            # pod-14's victim left, evicted pod-06)
            bound_names = {p["metadata"]["name"] for p in bound_before}

            def _nnn(p: dict[str, Any]) -> str:
                return str(p.get("status", {}).get("nominatedNodeName") or "")

            raced = sorted(n for n in before if n != name and n not in bound_names
                           and (n not in after or after[n]["spec"].get("nodeName")
                                or (_nnn(after[n]) and _nnn(after[n]) != _nnn(before[n]))))
            if raced and not r.agree:
                r = Result(name, r.areas, True, "raced", f"{r.detail} (not compared: {raced} bound meanwhile)")
            ok = r.agree
            report.add(r)
            total += 1
            agree += ok
            if verbose or not ok:
                print(f"  seed {seed} {name} [{','.join(sorted(r.areas))}] {'ok' if ok else 'DIFF ' + r.kind}: {r.detail}")
            if run_cp is not None and run_report is not None:
                # kubesched run, on its own API server holding upstream's state before this pod
                mirror_bound(run_cp, bound_before)
                mirrored = {p["metadata"]["name"] for p in bound_before}
                _create(run_cp, pod)
                run_after = settle(run_cp, name, settle_s)
                rp = run_after.get(name)
                run_node = rp["spec"].get("nodeName") if rp else None
                rc = _cond(rp) if rp else None
                run_msg = rc.get("message", "") if rc and rc["status"] == "False" else ""
                run_victims = sorted(n for n in mirrored
                                     if n not in run_after or run_after[n]["metadata"].get("deletionTimestamp"))
                rr = compare(name, areas[name], (up_node, up_msg, up_victims), (run_node, run_msg, run_victims),
                             top, "kubesched run")
                if raced and not rr.agree:
                    rr = Result(name, rr.areas, True, "raced", f"{rr.detail} (not compared: {raced} bound meanwhile)")
                if nominated:
                    rr.detail += f" (upstream had nominated pods pending, not mirrored: {sorted(p['metadata']['name'] for p in nominated)})"
                run_report.add(rr)
                run_agree += rr.agree
                if verbose or not rr.agree:
                    print(f"  seed {seed} {name} run [{','.join(sorted(rr.areas))}] "
                          f"{'ok' if rr.agree else 'DIFF ' + rr.kind}: {rr.detail}")
            before = after
        print(f"cluster seed {seed}: {len(nodes)} nodes, {total} pods, {agree}/{total} agree"
              + (f" (gates {format_feature_gates(gates)})" if gates else "")
              + (f"; kubesched run {run_agree}/{total}" if run_cp is not None else ""))
    finally:
        cp.stop()
        if run_cp is not None:
            run_cp.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--clusters", type=int, default=1, help="number of clusters (seeds seed..seed+n-1)")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds an unschedulable pod must stay unchanged")
    ap.add_argument("--dump", help="write the generated manifests of --seed to this file and exit")
    ap.add_argument("--run", action="store_true",
                    help="also run `kubesched run` live on a second kube-apiserver, fed upstream's state before "
                         "each pod, and compare it with upstream too")
    ap.add_argument("--dump-steps", metavar="DIR",
                    help="write each step's kubesched input (state before the pod + the pod) to DIR/<pod>.yaml")
    ap.add_argument("--upstream-version", choices=list(VERSIONS), default=DEFAULT_VERSION,
                    help="the real kube-scheduler/kube-apiserver to compare with (built by `make upstream`); "
                         "kubesched runs at the same --emulated-version (default %(default)s)")
    ap.add_argument("--feature-gates", default="", metavar="A=true,B=false",
                    help="gates for both sides (kube-apiserver, kube-scheduler, kubesched)")
    ap.add_argument("--random-gates", type=float, default=0.0, metavar="RATE",
                    help="give a cluster, with this probability, one or two non-default gates of GATE_CHOICES "
                         "on top of --feature-gates (default 0: none)")
    ap.add_argument("--groups", action="store_true",
                    help="clusters with pod groups (tools/upstream/diff_groups.py): GenericWorkload, "
                         "TopologyAwareWorkloadScheduling and PodGroupPreemptionPolicy on, the v1beta1 API served; "
                         "a step is a whole group or a single pod; the whole-group outcome and every pod's node "
                         "are compared")
    ap.add_argument("--group-timeout", type=float, default=60.0, metavar="S",
                    help="with --groups: the longest a step may take to settle (default %(default)s)")
    ap.add_argument("--record", metavar="DIR",
                    help="with --groups: write each step's upstream side (engine input, upstream outcome) to "
                         "DIR/seed-<S>.jsonl")
    ap.add_argument("--replay", metavar="PATH", action="append", default=[],
                    help="with --groups: no upstream run — compare the engine with steps recorded by --record "
                         "(a .jsonl file or a directory of them; repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    try:
        base_gates = parse_feature_gates(a.feature_gates)
        FeatureGate.from_flags(emulated_version=a.upstream_version, feature_gates=a.feature_gates)
    except (ValueError, ConfigError) as e:
        print(f"diff.py: {e}", file=sys.stderr)
        return 2
    global DUMP_DIR
    DUMP_DIR = a.dump_steps
    if a.groups:
        return main_groups(a, base_gates)
    if a.dump:
        objs, pods, _ = generate(a.seed, a.upstream_version)
        with open(a.dump, "w") as f:
            f.write(dump_yaml_all(objs + pods))
        return 0
    report = Report()
    run_report = Report() if a.run else None
    try:
        for s in range(a.seed, a.seed + a.clusters):
            gates = {**random_gates(s, a.upstream_version, a.random_gates), **base_gates}
            run_cluster(s, a.settle, a.verbose, report, run_report, version=a.upstream_version, gates=gates)
    except UpstreamNotBuilt as e:
        print(e, file=sys.stderr)
        return 2
    print(f"upstream v{a.upstream_version} (kube-scheduler {pinned_version(a.upstream_version) or '?'}), "
          f"kubesched --emulated-version {a.upstream_version}")
    diffs = summarize("kubesched engine vs upstream", report)
    if run_report is not None:
        diffs += summarize("kubesched run vs upstream", run_report)
    return 0 if not diffs else 1


# --------------------------------------------------------------------------- pod groups (--groups)


def main_groups(a: argparse.Namespace, base_gates: dict[str, bool]) -> int:
    """``--groups``: the group clusters of :func:`diff_groups.generate`, seeds ``a.seed``…"""
    if a.upstream_version != "1.37":
        print("diff.py: --groups needs --upstream-version 1.37 (v1beta1 PodGroup)", file=sys.stderr)
        return 2
    if a.dump:
        objs, steps = diff_groups.generate(a.seed)
        docs = list(objs)
        for st in steps:
            docs += ([st.group] if st.group else []) + st.pods
        with open(a.dump, "w") as f:
            f.write(dump_yaml_all(docs))
        return 0
    results: list[diff_groups.GroupResult] = []
    if a.replay:
        replayed_runs: list[diff_groups.GroupResult] = []
        replay_groups(a.replay, a.verbose, results, base_gates, replayed_runs)
        print(f"upstream v1.37 as recorded in {', '.join(a.replay)}, kubesched with "
              f"{format_feature_gates(diff_groups.GROUP_GATES)}")
        diffs = summarize_groups("kubesched engine vs upstream (pod groups, replayed)", results)
        if replayed_runs:
            diffs += summarize_groups("kubesched run (as recorded) vs upstream (pod groups, ties re-judged)",
                                      replayed_runs)
        return 0 if not diffs else 1
    run_results: list[diff_groups.GroupResult] | None = [] if a.run else None
    try:
        for s in range(a.seed, a.seed + a.clusters):
            record = None
            if a.record:
                os.makedirs(a.record, exist_ok=True)
                record = open(os.path.join(a.record, f"seed-{s}.jsonl"), "w")
            try:
                run_groups_cluster(s, a.settle, a.verbose, results, gates=base_gates, timeout=a.group_timeout,
                                   run_results=run_results, record=record)
            finally:
                if record is not None:
                    record.close()
    except UpstreamNotBuilt as e:
        print(e, file=sys.stderr)
        return 2
    print(f"upstream v1.37 (kube-scheduler {pinned_version('1.37') or '?'}) with "
          f"{format_feature_gates(diff_groups.GROUP_GATES)}, kubesched the same")
    diffs = summarize_groups("kubesched engine vs upstream (pod groups)", results)
    if run_results is not None:
        diffs += summarize_groups("kubesched run vs upstream (pod groups)", run_results)
    return 0 if not diffs else 1


def run_groups_cluster(seed: int, settle_s: float, verbose: bool, results: list[diff_groups.GroupResult], *,
                       gates: dict[str, bool] | None = None, timeout: float = 60.0,
                       run_results: list[diff_groups.GroupResult] | None = None, record: Any = None) -> None:
    """One group cluster: upstream v1.37.2 live, step by step (a whole group or a single pod),
    and kubesched's engine replaying each step from upstream's state before it; with
    ``run_results`` also ``kubesched run`` (same gates) on a second API server, given upstream's
    bound pods before each step (:func:`mirror_bound`) and then the step's PodGroup and pods.
    ``record``: a text file each step's upstream side is written to, one JSON line (the engine's
    input and upstream's outcome: :func:`replay_groups` compares the engine with it again)."""
    objs, steps = diff_groups.generate(seed)
    all_gates = {**diff_groups.GROUP_GATES, **(gates or {})}
    features = FeatureGate.from_flags(emulated_version="1.37", feature_gates=format_feature_gates(all_gates))
    config = decode_config(SCHED_CONFIG, features=features)
    cp = diff_groups.start_control_plane("1.37", gates)
    run_cp: ControlPlane | None = None
    run_proc: Any = None
    engine_error = run_error = ""
    try:
        for o in objs:
            diff_groups.create(cp, o)
        if run_results is not None:
            run_cp = diff_groups.start_control_plane("1.37", gates)
            for o in objs:
                diff_groups.create(run_cp, o)
            try:
                run_proc = run_cp.start_kubesched_run(SCHED_CONFIG, extra_args=[
                    f"--feature-gates={format_feature_gates(all_gates)}"])
            except Exception as e:  # noqa: BLE001 - reported, the upstream side goes on
                run_error = ("`kubesched run` does not start with the gates: "
                             + (str(e).strip().splitlines() or [""])[-1][:300])
                print(f"  seed {seed}: {run_error}")
        nodes_api = cp.request("GET", "/api/v1/nodes")[2]["items"]
        nodes = [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {k: v for k, v in n["metadata"].items() if k in ("name", "labels")},
                  "spec": n.get("spec", {}), "status": n["status"]} for n in nodes_api]
        stored = [o for o in objs if o["kind"] == "PriorityClass"]
        up_metrics = diff_groups.SchedulerMetrics(cp, cp.start_kube_scheduler(SCHED_CONFIG))
        run_metrics = diff_groups.SchedulerMetrics(run_cp, run_proc) if run_cp is not None and run_proc else None
        kubelet = FakeKubelet()
        kubelet.start(cp, _pods(cp))
        agree = 0
        start = [0]  # the engine's nextStartNodeIndex, carried from step to step
        for step in steps:
            before = _pods(cp)
            bound_before = [p for p in before.values()
                            if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")]
            groups_before = list(diff_groups.list_pod_groups(cp).values())
            created_group, created = diff_groups.create_step(cp, step.group, step.pods, up_metrics)
            names = [p["metadata"]["name"] for p in created]
            st = diff_groups.settle_step(cp, names, step.group["metadata"]["name"] if step.group else None,
                                         settle_s, timeout, metrics=up_metrics)
            kubelet.start(cp, st.pods)
            up = diff_groups.outcome(names, st.pods, st.group, [p["metadata"]["name"] for p in bound_before])
            # another pending pod (of an earlier step) was bound while this step settled: upstream's
            # outcome is not this step's alone — reported as "raced", not compared
            bound_names = {p["metadata"]["name"] for p in bound_before}
            raced = sorted(n for n in before if n not in bound_names and n not in names
                           and (n not in st.pods or st.pods[n]["spec"].get("nodeName")))
            rec = {"seed": seed, "step": step.name, "areas": sorted(step.areas), "stored": stored, "nodes": nodes,
                   "bound_before": bound_before, "groups_before": groups_before, "created_group": created_group,
                   "created": created, "up": up, "settled": st.settled, "why": st.why,
                   "seconds": round(st.seconds, 1), "raced": raced, "timeout": timeout}
            step_start = start[0]
            if engine_error:
                r = diff_groups.GroupResult(step.name, step.areas, False, "engine", engine_error)
            else:
                r = engine_group_compare(rec, config, features, start)
                if r.kind == "engine":  # the engine refused the gates: every later step would too
                    engine_error = r.detail
                    print(f"  seed {seed}: {engine_error}")
            r.upstream_kind = diff_groups.upstream_kind(up) if st.settled else "unsettled"
            results.append(r)
            agree += r.agree
            if verbose or (not r.agree and r.kind != "engine"):
                print(f"  seed {seed} {step.name} [{','.join(sorted(r.areas))}] "
                      f"{'ok' if r.agree else 'DIFF ' + r.kind}: {r.detail}")
                if verbose:
                    print(f"      upstream ({st.seconds:.1f} s): "
                          + json.dumps({"pods": {n: v['node'] or v['message'] for n, v in up['pods'].items()},
                                        "condition": up["group_condition"], "victims": up["victims"]}))
            if run_cp is not None and run_results is not None:
                if run_error:
                    rr = diff_groups.GroupResult(step.name, step.areas, False, "engine", run_error)
                else:
                    mirror_bound(run_cp, bound_before)
                    fresh = step.group and step.group["metadata"]["name"] not in diff_groups.list_pod_groups(run_cp)
                    diff_groups.create_step(run_cp, step.group if fresh else None, step.pods, run_metrics)
                    rst = diff_groups.settle_step(run_cp, names, step.group["metadata"]["name"] if step.group else None,
                                                  settle_s, timeout, metrics=run_metrics)
                    run_out = diff_groups.outcome(names, rst.pods, rst.group,
                                                  [p["metadata"]["name"] for p in bound_before])
                    rr = (diff_groups.compare_group(step.name, step.areas, up, run_out, {}) if engine_error
                          else run_group_compare(rec, run_out, config, features, step_start))
                    if raced and not rr.agree:
                        rr = diff_groups.GroupResult(step.name, rr.areas, True, "raced",
                                                     f"{rr.detail} (not compared: {raced} bound meanwhile)")
                    rec["run"] = run_out  # kubesched run's outcome: --replay re-judges its ties
                rr.upstream_kind = r.upstream_kind
                run_results.append(rr)
                if verbose or (not rr.agree and rr.kind != "engine"):
                    print(f"  seed {seed} {step.name} run [{','.join(sorted(rr.areas))}] "
                          f"{'ok' if rr.agree else 'DIFF ' + rr.kind}: {rr.detail}")
            if record is not None:
                record.write(json.dumps(rec) + "\n")
                record.flush()
        print(f"group cluster seed {seed}: {len(nodes)} nodes, {len(steps)} steps, {agree}/{len(steps)} agree"
              + (" (engine unavailable)" if engine_error else "")
              + (f"; kubesched run {sum(x.agree for x in run_results[-len(steps):])}/{len(steps)}"
                 if run_results is not None else ""), flush=True)
    finally:
        cp.stop()
        if run_cp is not None:
            run_cp.stop()


def _recorded_up(rec: dict[str, Any]) -> dict[str, Any]:
    """A recorded step's upstream outcome, the creation-time SchedulingGated message (recorded
    before :func:`diff_groups.outcome` read it as no condition) as ``<no condition>``."""
    up = copy.deepcopy(rec["up"])
    for v in up["pods"].values():
        if v["message"] == "Scheduling is blocked due to non-empty scheduling gates":
            v["message"] = "<no condition>"
    return up


def engine_group_compare(rec: dict[str, Any], config: Any, features: Any,
                         start: list[int] | None = None) -> diff_groups.GroupResult:
    """Replay one recorded step (a line of ``--record``) through kubesched's engine and compare it
    with upstream's outcome: ``unsettled`` when upstream did not settle, ``engine`` when the
    engine refuses the gates, ``engine-crash`` when it raised, ``raced`` (agreeing) when a
    disagreement coincides with an earlier step's pod bound meanwhile, ``tie`` (agreeing) when
    one of upstream's random choices (:class:`diff_groups.EngineChoices`) gives its outcome.
    ``start``: a one-element list holding the engine's ``nextStartNodeIndex`` carried from step
    to step (updated)."""
    start = start if start is not None else [0]
    areas, up = set(rec["areas"]), _recorded_up(rec)
    if not rec["settled"]:
        return diff_groups.GroupResult(rec["step"], areas, False, "unsettled",
                                       f"upstream did not settle in {rec['timeout']:.0f} s ({rec['why']}): {up}")
    def run(choices: diff_groups.EngineChoices) -> diff_groups.GroupResult:
        ks, top = diff_groups.engine_group_step(config, features, rec["stored"], rec["nodes"], rec["bound_before"],
                                                rec["groups_before"], rec["created_group"], rec["created"], _strip,
                                                choices=choices)
        return diff_groups.compare_group(rec["step"], areas, up, ks, top)

    try:
        seen = diff_groups.EngineChoices(start_index=start[0])
        r = run(seen)
        start[0] = seen.next_start_index
        if not r.agree:
            # upstream's placement order and its choice among equally scored placements are random:
            # the step agrees as a tie when the engine, making upstream's choices, gives its outcome
            for alt in diff_groups.choice_alternatives(seen):
                ra = run(alt)
                if ra.agree:
                    what = "a race" if alt.stale_status else "a tie: upstream's random choice"
                    ra.detail += f" ({what} — {alt.describe()}; the engine's own: {r.detail})"
                    ra.kind = "race" if alt.stale_status else "tie"
                    r = ra
                    start[0] = alt.next_start_index
                    break
    except diff_groups.EngineUnavailable as e:
        if e.permanent:
            return diff_groups.GroupResult(rec["step"], areas, False, "engine",
                                           f"kubesched's engine cannot schedule pod groups yet: {e}")
        return diff_groups.GroupResult(rec["step"], areas, False, "engine-crash", f"kubesched's engine raised: {e}")
    if rec["raced"] and not r.agree:
        r = diff_groups.GroupResult(rec["step"], r.areas, True, "raced",
                                    f"{r.detail} (not compared: {rec['raced']} bound meanwhile)")
    return r


def run_group_compare(rec: dict[str, Any], run_out: dict[str, Any], config: Any, features: Any,
                      start: int) -> diff_groups.GroupResult:
    """Compare ``kubesched run``'s outcome of a recorded step with upstream's. A disagreement is
    a ``tie`` (or the condition ``race``) only with evidence: kubesched's engine, replaying the
    step from the same state (``start``: its ``nextStartNodeIndex`` at this step), gives
    ``kubesched run``'s outcome exactly under its own choices or one of the
    :class:`diff_groups.EngineChoices` alternatives, **and** upstream's under another — both
    outcomes are choices between equally scored nodes/placements (or the two sides of the race)
    that the same engine makes. Otherwise it stays a difference."""
    areas, up = set(rec["areas"]), _recorded_up(rec)
    r = diff_groups.compare_group(rec["step"], areas, up, run_out, {})
    if r.agree or not rec["settled"]:
        return r

    def reproduces(target: dict[str, Any]) -> diff_groups.EngineChoices | None:
        seen = diff_groups.EngineChoices(start_index=start)
        ks, _ = diff_groups.engine_group_step(config, features, rec["stored"], rec["nodes"], rec["bound_before"],
                                              rec["groups_before"], rec["created_group"], rec["created"], _strip,
                                              choices=seen)
        if diff_groups.compare_group(rec["step"], areas, target, ks, {}).agree:
            return seen
        for alt in diff_groups.choice_alternatives(seen):
            ks, _ = diff_groups.engine_group_step(config, features, rec["stored"], rec["nodes"],
                                                  rec["bound_before"], rec["groups_before"], rec["created_group"],
                                                  rec["created"], _strip, choices=alt)
            if diff_groups.compare_group(rec["step"], areas, target, ks, {}).agree:
                return alt
        return None

    try:
        got_run, got_up = reproduces(run_out), reproduces(up)
    except diff_groups.EngineUnavailable:
        return r
    if got_run is None or got_up is None:
        r.detail += (" (not a tie: the engine gives " + ("neither outcome" if got_run is None and got_up is None
                     else "upstream's outcome but not kubesched run's" if got_run is None
                     else "kubesched run's outcome but not upstream's") + " under any choice)")
        return r
    race = got_run.stale_status != got_up.stale_status
    kind = "race" if race else "tie"
    return diff_groups.GroupResult(
        rec["step"], areas, True, kind,
        f"{r.detail} (a {kind}: the engine gives kubesched run's outcome with {got_run.describe()}, "
        f"upstream's with {got_up.describe()})", r.both_bound, r.exact)


def replay_groups(paths: list[str], verbose: bool, results: list[diff_groups.GroupResult],
                  gates: dict[str, bool] | None = None,
                  run_results: list[diff_groups.GroupResult] | None = None) -> None:
    """``--replay``: compare kubesched's engine again with upstream outcomes recorded by
    ``--record`` (files, or directories of ``*.jsonl``), without starting anything upstream.
    ``run_results``: steps recorded with ``--run`` also judge ``kubesched run``'s recorded outcome
    again (:func:`run_group_compare`)."""
    all_gates = {**diff_groups.GROUP_GATES, **(gates or {})}
    features = FeatureGate.from_flags(emulated_version="1.37", feature_gates=format_feature_gates(all_gates))
    config = decode_config(SCHED_CONFIG, features=features)
    files: list[str] = []
    for p in paths:
        files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".jsonl")) if os.path.isdir(p) \
            else [p]
    by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for fn in files:
        with open(fn) as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    by_seed[rec["seed"]].append(rec)
    for seed in sorted(by_seed):
        agree = 0
        start = [0]
        for rec in by_seed[seed]:
            step_start = start[0]
            r = engine_group_compare(rec, config, features, start)
            if run_results is not None and "run" in rec:
                rr = run_group_compare(rec, rec["run"], config, features, step_start)
                if rec["raced"] and not rr.agree:
                    rr = diff_groups.GroupResult(rr.step, rr.areas, True, "raced", rr.detail)
                rr.upstream_kind = diff_groups.upstream_kind(rec["up"]) if rec["settled"] else "unsettled"
                run_results.append(rr)
                if verbose or not rr.agree or rr.kind in ("tie", "race"):
                    print(f"  seed {seed} {rr.step} run [{','.join(sorted(rr.areas))}] "
                          f"{'ok ' + rr.kind if rr.agree else 'DIFF ' + rr.kind}: {rr.detail}")
            r.upstream_kind = diff_groups.upstream_kind(rec["up"]) if rec["settled"] else "unsettled"
            results.append(r)
            agree += r.agree
            if verbose or not r.agree:
                print(f"  seed {seed} {r.step} [{','.join(sorted(r.areas))}] "
                      f"{'ok' if r.agree else 'DIFF ' + r.kind}: {r.detail}")
                if verbose:
                    up = rec["up"]
                    print(f"      upstream ({rec['seconds']:.1f} s): "
                          + json.dumps({"pods": {n: v['node'] or v['message'] for n, v in up['pods'].items()},
                                        "condition": up["group_condition"], "victims": up["victims"]}))
        print(f"group cluster seed {seed} (recorded): {len(by_seed[seed])} steps, {agree}/{len(by_seed[seed])} agree",
              flush=True)


def summarize_groups(title: str, results: list[diff_groups.GroupResult]) -> int:
    """Agreement per area and overall for group steps; returns the number of disagreements."""
    print(f"== {title}")
    by_area: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        for area in [*r.areas, "ALL"]:
            c = by_area[area]
            c["agree" if r.agree else "differ"] += 1
            c["both_bound"] += r.both_bound
            c["exact"] += r.exact
    width = max([14, *map(len, by_area)])
    print(f"{'area':<{width}}  agree  differ  exact-node")
    for area in [*sorted(x for x in by_area if x != "ALL"), "ALL"]:
        c = by_area[area]
        print(f"{area:<{width}} {c['agree']:>6}  {c['differ']:>6}  {c['exact']:>5}/{c['both_bound']}")
    diffs = [r for r in results if not r.agree]
    print(f"total: {len(results) - len(diffs)}/{len(results)} steps agree")
    print(json.dumps({"kinds": Counter(r.kind for r in results),
                      "upstream": Counter(r.upstream_kind for r in results)}))
    engine = next((r.detail for r in results if r.kind == "engine"), "")
    if engine:
        print(f"NOTE: {sum(r.kind == 'engine' for r in results)} steps not compared — {engine}")
    return len(diffs)


def summarize(title: str, report: Report) -> int:
    """Print agreement per area and overall — ``agree`` by the rules above (upstream's node
    among kubesched's top-score nodes), and ``exact``: of the pods bound on both sides, how
    many on the very same node (1.37 breaks ties deterministically given the node order,
    upstream-v137 §2.6; 1.34 at random). Returns the number of disagreements."""
    print(f"== {title}")
    by_area: dict[str, Counter[str]] = defaultdict(Counter)
    for r in report.results:
        for area in [*r.areas, "ALL"]:
            c = by_area[area]
            c["agree" if r.agree else "differ"] += 1
            if r.exact is not None:
                c["both_bound"] += 1
                c["exact"] += r.exact
    width = max([14, *map(len, by_area)])
    print(f"{'area':<{width}}  agree  differ  exact-node")
    for area in [*sorted(a for a in by_area if a != "ALL"), "ALL"]:
        c = by_area[area]
        print(f"{area:<{width}} {c['agree']:>6}  {c['differ']:>6}  {c['exact']:>5}/{c['both_bound']}")
    diffs = [r for r in report.results if not r.agree]
    both = [r for r in report.results if r.exact is not None]
    print(f"total: {len(report.results) - len(diffs)}/{len(report.results)} pods agree; "
          f"exact node {sum(bool(r.exact) for r in both)}/{len(both)} of the pods bound on both sides")
    print(json.dumps({"kinds": Counter(r.kind for r in report.results)}))
    return len(diffs)


if __name__ == "__main__":
    sys.exit(main())
