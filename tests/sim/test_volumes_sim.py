"""VolumeBinding end to end in the simulator: the in-memory store acts as the PV controller,
the provisioner and the ephemeral-volume controller (``kubesched.controllers.pvcontroller``), so a
WaitForFirstConsumer claim is bound to the smallest fitting PV on the chosen node, a claim of a
provisioning class gets a PV on the selected node, and later pods see the result."""

from __future__ import annotations

import yaml

from kubesched.sim.manifests import parse_manifest_text
from kubesched.sim.simulate import simulate

HOST = "kubernetes.io/hostname"


def node(name, zone):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def sc(name, provisioner, **extra):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer", **extra}


def local_pv(name, host, size):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"storageClassName": "local", "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "local": {"path": "/x"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
                         {"matchExpressions": [{"key": HOST, "operator": "In", "values": [host]}]}]}}},
            "status": {"phase": "Available"}}


def claim(name, cls, size="1Gi"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}}}


def pod(name, volume):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c"}], "volumes": [volume]}}


def run(docs):
    res = simulate(parse_manifest_text("\n---\n".join(yaml.safe_dump(d) for d in docs), "c.yaml"))
    objs = {(o["kind"], o["metadata"]["name"]): o for o in res.output_objects()}
    return {o.key.split("/")[1]: o for o in res.outcomes}, objs


def test_static_binding_provisioning_and_ephemeral():
    docs = [node("n1", "a"), node("n2", "b"), sc("local", "kubernetes.io/no-provisioner"),
            sc("ebs", "ebs.csi.aws.com", allowedTopologies=[{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]),
            local_pv("pv-big", "n2", "10Gi"), local_pv("pv-small", "n2", "2Gi"),
            claim("c1", "local"), claim("c2", "local"), claim("c3", "local"),
            pod("p1", {"name": "d", "persistentVolumeClaim": {"claimName": "c1"}}),
            pod("p2", {"name": "d", "persistentVolumeClaim": {"claimName": "c2"}}),
            pod("p3", {"name": "d", "persistentVolumeClaim": {"claimName": "c3"}}),
            pod("p4", {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "storageClassName": "ebs", "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "2Gi"}}}}}})]
    out, objs = run(docs)
    assert out["p1"].node == out["p2"].node == "n2"
    # two PVs for three claims: the third finds none once the others are bound
    assert out["p3"].node is None
    assert "node(s) didn't find available persistent volumes to bind" in out["p3"].message
    assert objs[("PersistentVolumeClaim", "c1")]["spec"]["volumeName"] == "pv-small"  # smallest fit first
    assert objs[("PersistentVolumeClaim", "c2")]["spec"]["volumeName"] == "pv-big"
    for c in ("c1", "c2"):
        pvc = objs[("PersistentVolumeClaim", c)]
        assert pvc["status"]["phase"] == "Bound"
        assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert objs[("PersistentVolume", "pv-small")]["spec"]["claimRef"]["name"] == "c1"
    # ephemeral: claim created as the controller would, provisioned in zone a only
    assert out["p4"].node == "n1"
    eph = objs[("PersistentVolumeClaim", "p4-scratch")]
    assert eph["metadata"]["ownerReferences"][0]["uid"] == "uid-p4"
    assert eph["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n1"
    pv = objs[("PersistentVolume", eph["spec"]["volumeName"])]
    assert pv["spec"]["csi"]["driver"] == "ebs.csi.aws.com" and pv["spec"]["capacity"]["storage"] == "2Gi"
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["n1"]


def test_immediate_unbound_claim_waits():
    docs = [node("n1", "a"), {**sc("imm", "ebs.csi.aws.com"), "volumeBindingMode": "Immediate"}, claim("c", "imm"),
            pod("p", {"name": "d", "persistentVolumeClaim": {"claimName": "c"}})]
    out, _ = run(docs)
    assert out["p"].node is None
    assert out["p"].message.startswith("0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.")


def test_not_enough_capacity_reason():
    docs = [node("n1", "a"), sc("ebs", "ebs.csi.aws.com"), claim("c", "ebs", "5Gi"),
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"},
             "spec": {"storageCapacity": True}},
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
             "metadata": {"name": "cap", "namespace": "kube-system"}, "storageClassName": "ebs", "capacity": "1Gi",
             "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}},
            pod("p", {"name": "d", "persistentVolumeClaim": {"claimName": "c"}})]
    out, _ = run(docs)
    assert "1 node(s) did not have enough free storage" in out["p"].message
