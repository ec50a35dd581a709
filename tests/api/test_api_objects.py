"""Decoding real-shaped manifests into the slim Structs."""

from __future__ import annotations

import gc

import msgspec
import pytest

from kubesched.api import objects as o
from kubesched.errors import InputError

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "uid": "u1",
        "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "s1", "controller": True}],
        "managedFields": [{"manager": "kubectl"}],  # unknown: ignored
        "creationTimestamp": "2024-01-01T00:00:00Z",
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m", "memory": 1024}, "limits": {"cpu": 0.5}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1", "protocol": "UDP"}],
                "livenessProbe": {"httpGet": {"path": "/"}},
            }
        ],
        "initContainers": [{"name": "sidecar", "restartPolicy": "Always"}],
        "nodeSelector": {"disk": "ssd"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}}
                ],
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone", "matchLabelKeys": ["pod-template-hash"]}}
                ]
            },
        },
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
        "schedulerName": "default-scheduler",
        "priority": 1000,
        "priorityClassName": "high",
        "preemptionPolicy": "Never",
        "overhead": {"cpu": "10m"},
        "schedulingGates": [{"name": "gate"}],
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2, "nodeAffinityPolicy": "Honor"}
        ],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}, {"name": "cfg", "configMap": {"name": "x"}}],
        "hostNetwork": True,
        "resources": {"requests": {"cpu": "1"}},
    },
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}], "nominatedNodeName": "n2"},
}

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "spec": {"unschedulable": True, "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24", "providerID": "aws:///i-1"},
    "status": {
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "images": [{"names": ["nginx:1"], "sizeBytes": 1000}],
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def test_decode_pod():
    pod = o.decode(o.Pod, POD)
    assert pod.metadata.name == "web-0" and pod.metadata.labels == {"app": "web"}
    assert pod.metadata.owner_references[0].controller is True
    c = pod.spec.containers[0]
    assert c.resources.requests == {"cpu": "100m", "memory": 1024}
    assert c.resources.limits == {"cpu": 0.5}
    assert c.ports[0].host_ip == "10.0.0.1" and c.ports[0].host_port == 8080 and c.ports[0].protocol == "UDP"
    assert pod.spec.init_containers[0].restart_policy == "Always"
    na = pod.spec.affinity.node_affinity
    assert na.required_during_scheduling_ignored_during_execution.node_selector_terms[0].match_expressions[0].values == ["a"]
    assert na.preferred_during_scheduling_ignored_during_execution[0].preference.match_fields[0].key == "metadata.name"
    term = pod.spec.affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution[0]
    assert term.weight == 10 and term.pod_affinity_term.topology_key == "zone"
    assert term.pod_affinity_term.match_label_keys == ["pod-template-hash"]
    assert pod.spec.affinity.pod_affinity is None
    assert pod.spec.tolerations[0].toleration_seconds == 30
    assert pod.spec.topology_spread_constraints[0].min_domains == 2
    assert pod.spec.topology_spread_constraints[0].node_taints_policy is None
    assert pod.spec.volumes[0].persistent_volume_claim.claim_name == "data-web-0"
    assert pod.spec.volumes[1].persistent_volume_claim is None
    assert pod.spec.host_network and pod.spec.resources.requests == {"cpu": "1"}
    assert pod.status.nominated_node_name == "n2"
    assert o.pod_priority(pod) == 1000 and o.pod_key(pod) == "default/web-0"
    assert not o.is_terminating(pod)


def test_decode_node_and_allocatable_default():
    node = o.decode(o.Node, NODE)
    assert node.spec.pod_cidr == "10.0.0.0/24" and node.spec.provider_id == "aws:///i-1"
    assert node.spec.taints[0].effect == "NoSchedule"
    assert node.status.images[0].size_bytes == 1000
    assert o.node_allocatable(node) == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    node2 = o.decode(o.Node, {**NODE, "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3500m"}}})
    assert o.node_allocatable(node2) == {"cpu": "3500m"}


def test_encode_round_trip_uses_kubernetes_names():
    node = o.decode(o.Node, NODE)
    out = o.encode_builtins(node)
    assert out["spec"]["podCIDR"] == "10.0.0.0/24" and out["spec"]["providerID"] == "aws:///i-1"
    pod = o.decode(o.Pod, POD)
    out = o.encode_builtins(pod)
    assert out["spec"]["containers"][0]["ports"][0]["hostIP"] == "10.0.0.1"
    assert "managedFields" not in out["metadata"]
    assert o.decode(o.Pod, out) == pod
    assert o.encode_builtins(o.Pod()) == {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}, "status": {}}


def test_defaults_are_independent():
    a, b = o.Pod(), o.Pod()
    a.metadata.labels["x"] = "y"
    assert b.metadata.labels == {}
    assert o.Taint(key="k").value == "" and o.Toleration().operator == ""
    assert o.ContainerPort(container_port=1).protocol == "TCP"


def test_structs_not_gc_tracked():
    assert not gc.is_tracked(o.Pod())


def test_decode_error_paths():
    bad = {"spec": {"containers": [{"ports": [{"containerPort": "80"}]}]}}
    with pytest.raises(InputError) as ei:
        o.decode(o.Pod, bad)
    assert ei.value.path == "spec.containers[0].ports[0].containerPort"
    assert "Expected `int`, got `str`" in str(ei.value)
    with pytest.raises(InputError) as ei:
        o.decode(o.Pod, bad, path="items[3]")
    assert ei.value.path == "items[3].spec.containers[0].ports[0].containerPort"
    assert str(ei.value).startswith("items[3].spec.containers[0].ports[0].containerPort: ")
    with pytest.raises(InputError) as ei:
        o.decode(o.Pod, "nope")
    assert ei.value.path is None
    with pytest.raises(InputError) as ei:
        o.decode(o.Pod, {"metadata": {"labels": {"a": 1}}}, path="pods.yaml")
    assert ei.value.path == "pods.yaml.metadata.labels[...]"
    with pytest.raises(InputError):  # bool is not a quantity
        o.decode(o.Pod, {"spec": {"overhead": {"cpu": True}}})
    with pytest.raises(InputError):
        o.decode(o.Pod, {"spec": {"priority": "5"}})


def test_kinds_decode():
    assert set(o.KINDS) == {
        "Pod", "Node", "Namespace", "PriorityClass", "Service", "ReplicationController",
        "ReplicaSet", "StatefulSet", "PodDisruptionBudget",
    }
    pc = o.decode(o.KINDS["PriorityClass"], {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000, "globalDefault": True, "preemptionPolicy": "Never"})
    assert pc.value == 1000 and pc.global_default and pc.api_version == "scheduling.k8s.io/v1"
    svc = o.decode(o.Service, {"metadata": {"name": "s"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    assert svc.spec.selector == {"app": "web"}
    rc = o.decode(o.ReplicationController, {"spec": {"selector": {"a": "b"}}})
    assert rc.spec.selector == {"a": "b"}
    rs = o.decode(o.ReplicaSet, {"spec": {"selector": {"matchLabels": {"a": "b"}}, "replicas": 3}})
    assert rs.spec.selector.match_labels == {"a": "b"}
    ss = o.decode(o.StatefulSet, {"spec": {}})
    assert ss.spec.selector is None
    pdb = o.decode(o.PodDisruptionBudget, {"spec": {"minAvailable": "50%", "selector": {}}, "status": {"disruptionsAllowed": 1, "disruptedPods": {"p": "2024-01-01T00:00:00Z"}}})
    assert pdb.spec.min_available == "50%" and pdb.spec.max_unavailable is None
    assert pdb.status.disruptions_allowed == 1 and pdb.status.disrupted_pods == {"p": "2024-01-01T00:00:00Z"}
    ns = o.decode(o.Namespace, {"metadata": {"name": "kube-system", "labels": {"a": "b"}}})
    assert ns.metadata.name == "kube-system"


def test_helpers():
    pod = o.Pod(metadata=o.ObjectMeta(name="p", deletion_timestamp="2024-01-01T00:00:00Z"))
    assert o.is_terminating(pod) and o.pod_priority(pod) == 0 and o.pod_key(pod) == "p"
    assert msgspec.structs.replace(pod, spec=o.PodSpec(priority=-5)).spec.priority == -5
