"""A realistic ``kubectl get nodes,pods,pv,pvc,sc,pdb,priorityclasses -A -o yaml`` dump, generated.

What a real cluster dump holds and the simulator must load as it is: a ``v1 List`` of objects
with full ``status``, ``managedFields`` (``fieldsV1`` trees), ``ownerReferences``, uids and
resourceVersions; kube-system pods naming the built-in ``system-node-critical`` /
``system-cluster-critical`` PriorityClasses (not in the dump) with their ``spec.priority``
already set; Succeeded and Failed Job pods still bound to nodes; a terminating pod
(``deletionTimestamp``); a few pending pods; PV/PVC/StorageClass/PDB objects.

``cluster_dump(nodes, pods, seed=0)`` returns the List (a ``dict``); ``write_dump(path, ...)``
writes it as YAML (block style, as kubectl prints it) or JSON. Used by the tests of
:mod:`kubesched.sim` and by ``benchmarks/dump_load.py`` (500 nodes, 10,000 pods ≈ 36 MB).
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import yaml

__all__ = ["cluster_dump", "write_dump"]

_TS = "2026-11-20T08:{:02d}:{:02d}Z"


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(i: int) -> str:
    return _TS.format((i // 60) % 60, i % 60)


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    name = f"ip-10-0-{i // 250}-{i % 250}.ec2.internal"
    zone = f"us-east-1{'abc'[i % 3]}"
    images = [{"names": [f"registry.example.com/team{j}/app@sha256:{rng.getrandbits(256):064x}",
                         f"registry.example.com/team{j}/app:v{j}.{i % 7}"], "sizeBytes": 10_000_000 + j * 1_234_567}
              for j in range(6)]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": _ts(i), "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "m5.2xlarge",
                "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m5.2xlarge",
                "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": zone},
            "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:node.alpha.kubernetes.io/ttl": {}},
                               "f:labels": {".": {}, "f:kubernetes.io/hostname": {}}},
                "f:spec": {"f:providerID": {}}}, "manager": "kubelet", "operation": "Update",
                "time": _ts(i)}],
            "name": name, "resourceVersion": str(100000 + i), "uid": _uid(rng)},
        "spec": {"providerID": f"aws:///{zone}/i-{rng.getrandbits(64):016x}"},
        "status": {
            "addresses": [{"address": f"10.0.{i // 250}.{i % 250}", "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "31482424Ki", "pods": "110"},
            "capacity": {"cpu": "8", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "32408632Ki", "pods": "110"},
            "conditions": [{"lastHeartbeatTime": _ts(i), "lastTransitionTime": _ts(i), "message": m,
                            "reason": r, "status": s, "type": t} for t, s, r, m in (
                ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": _uid(rng), "containerRuntimeVersion": "containerd://1.7.22",
                         "kernelVersion": "6.1.112", "kubeProxyVersion": "v1.34.1", "kubeletVersion": "v1.34.1",
                         "machineID": f"{rng.getrandbits(128):032x}", "operatingSystem": "linux",
                         "osImage": "Amazon Linux 2023", "systemUUID": _uid(rng)},
        },
    }


def _pod(i: int, node: str | None, rng: random.Random, *, ns: str, phase: str, owner: str,
         priority_class: str | None = None, priority: int = 0, cpu: str = "100m") -> dict[str, Any]:
    app = f"app-{i % 40}"
    name = f"{app}-{rng.getrandbits(40):010x}"[:40]
    ready = "True" if phase == "Running" else "False"
    containers = [{
        "env": [{"name": "LOG_LEVEL", "value": "info"}],
        "image": f"registry.example.com/team{i % 12}/app:v{i % 12}.{i % 7}", "imagePullPolicy": "IfNotPresent",
        "name": "app", "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": cpu, "memory": "128Mi"}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }]
    spec: dict[str, Any] = {
        "containers": containers, "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority", "priority": priority,
        "restartPolicy": "Always" if owner == "ReplicaSet" else "Never",
        "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "tolerationSeconds": 300},
                        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                         "tolerationSeconds": 300}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable"}
    if node:
        status.update({
            "conditions": [{"lastProbeTime": None, "lastTransitionTime": _ts(i), "status": s, "type": t}
                           for t, s in (("Initialized", "True"),
                                        ("Ready", ready), ("ContainersReady", ready), ("PodScheduled", "True"))],
            "containerStatuses": [{
                "containerID": f"containerd://{rng.getrandbits(256):064x}",
                "image": containers[0]["image"],
                "imageID": f"registry.example.com/app@sha256:{rng.getrandbits(256):064x}",
                "lastState": {}, "name": "app", "ready": ready == "True", "restartCount": 0, "started": ready == "True",
                "state": {"running": {"startedAt": _ts(i)}} if phase == "Running" else
                {"terminated": {"containerID": "containerd://x", "exitCode": 0 if phase == "Succeeded" else 1,
                                "finishedAt": _ts(i), "reason": "Completed" if phase == "Succeeded" else "Error",
                                "startedAt": _ts(i)}}}],
            "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "podIP": f"100.64.{i // 250 % 250}.{i % 250}",
            "podIPs": [{"ip": f"100.64.{i // 250 % 250}.{i % 250}"}], "startTime": _ts(i)})
    else:
        status["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": _ts(i), "message":
                                 "0/3 nodes are available: 3 Insufficient cpu.", "reason": "Unschedulable",
                                 "status": "False", "type": "PodScheduled"}]
    owner_name = f"{app}-{i % 40:05d}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "creationTimestamp": _ts(i), "generateName": f"{owner_name}-",
            "labels": {"app": app, "pod-template-hash": f"6b{i % 40:03d}c9"},
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
                    "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                                   "f:ownerReferences": {".": {}, f'k:{{"uid":"{_uid(rng)}"}}': {}}},
                    "f:spec": {"f:containers": {'k:{"name":"app"}': {
                        ".": {},
                        "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                        "f:resources": {".": {}, "f:limits": {".": {}, "f:memory": {}},
                                        "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}}}},
                        "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}}},
                    "manager": "kube-controller-manager", "operation": "Update", "time": _ts(i)},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {
                    "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {}}},
                    "manager": "kubelet", "operation": "Update", "subresource": "status", "time": _ts(i)}],
            "name": name, "namespace": ns,
            "ownerReferences": [{"apiVersion": "apps/v1" if owner == "ReplicaSet" else "batch/v1",
                                 "blockOwnerDeletion": True, "controller": True, "kind": owner,
                                 "name": owner_name, "uid": _uid(rng)}],
            "resourceVersion": str(200000 + i), "uid": _uid(rng)},
        "spec": spec,
        "status": status,
    }


def cluster_dump(nodes: int, pods: int, *, seed: int = 0, pending: int = 5) -> dict[str, Any]:
    """A ``v1 List``: ``nodes`` nodes, ``pods`` pods (bound round-robin; about 1 in 50 a Succeeded
    Job pod, 1 in 200 Failed, 1 in 25 a kube-system pod at a built-in system priority;
    one terminating pod) plus ``pending`` unbound pods, a StorageClass, PV, PVC and PDB."""
    rng = random.Random(seed)
    node_objs = [_node(i, rng) for i in range(nodes)]
    items: list[dict[str, Any]] = list(node_objs)
    for i in range(pods):
        node = node_objs[i % nodes]["metadata"]["name"] if nodes else None
        if i % 25 == 0:
            cls = "system-node-critical" if i % 50 == 0 else "system-cluster-critical"
            value = 2_000_001_000 if cls == "system-node-critical" else 2_000_000_000
            p = _pod(i, node, rng, ns="kube-system", phase="Running", owner="DaemonSet" if i % 2 == 0 else "ReplicaSet",
                     priority_class=cls, priority=value)
        elif i % 50 == 7:
            p = _pod(i, node, rng, ns="batch", phase="Succeeded", owner="Job", cpu="2")
        elif i % 200 == 13:
            p = _pod(i, node, rng, ns="batch", phase="Failed", owner="Job", cpu="2")
        else:
            p = _pod(i, node, rng, ns=f"team-{i % 12}", phase="Running", owner="ReplicaSet")
        if i == 3:
            p["metadata"]["deletionTimestamp"] = _ts(i)
            p["metadata"]["deletionGracePeriodSeconds"] = 30
        items.append(p)
    for j in range(pending):
        items.append(_pod(pods + j, None, rng, ns="team-0", phase="Pending", owner="ReplicaSet"))
    items.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "gp3", "uid": _uid(rng), "resourceVersion": "1",
                               "creationTimestamp": _ts(0),
                               "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                  "provisioner": "ebs.csi.aws.com", "reclaimPolicy": "Delete",
                  "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True})
    items.append({"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": "pvc-data-0", "uid": _uid(rng), "resourceVersion": "2",
                               "creationTimestamp": _ts(0)},
                  "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"},
                           "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "data-0",
                                        "namespace": "team-0"},
                           "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-0123"},
                           "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "gp3",
                           "volumeMode": "Filesystem"},
                  "status": {"phase": "Bound"}})
    items.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "data-0", "namespace": "team-0", "uid": _uid(rng), "resourceVersion": "3",
                               "creationTimestamp": _ts(0)},
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                           "storageClassName": "gp3", "volumeMode": "Filesystem", "volumeName": "pvc-data-0"},
                  "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}, "phase": "Bound"}})
    items.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                  "metadata": {"name": "app-0", "namespace": "team-0", "uid": _uid(rng), "resourceVersion": "4",
                               "creationTimestamp": _ts(0)},
                  "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "app-0"}}},
                  "status": {"currentHealthy": 1, "desiredHealthy": 0, "disruptionsAllowed": 1,
                             "expectedPods": 1, "observedGeneration": 1}})
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def write_dump(path: str, nodes: int, pods: int, *, seed: int = 0, fmt: str = "yaml", pending: int = 5) -> int:
    """Write :func:`cluster_dump` to ``path`` as YAML or JSON (``fmt``); returns the size in bytes."""
    doc = cluster_dump(nodes, pods, seed=seed, pending=pending)
    if fmt == "json":
        text = json.dumps(doc, indent=4)
    else:
        dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        text = yaml.dump(doc, Dumper=dumper, default_flow_style=False, sort_keys=True, width=1 << 20)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return len(text.encode())
