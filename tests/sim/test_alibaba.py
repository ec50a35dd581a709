"""Alibaba openb trace → Kubernetes objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.errors import ManifestError
from kubesched.sim.alibaba import (
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_LABEL,
    GPU_RESOURCE,
    NODE_MAX_PODS,
    QOS_ANNOTATION,
    TracePod,
    load_nodes,
    load_pods,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "alibaba-openb-v2023"

POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# --------------------------------------------------------------------------- nodes

def test_nodes(tmp_path):
    p = write(tmp_path, "nodes.csv", NODE_HEADER + "n-0,32000,262144,0,\nn-1,96000,393216,8,G2\n")
    cpu_node, gpu_node = load_nodes(p)
    assert cpu_node["kind"] == "Node" and cpu_node["apiVersion"] == "v1"
    assert cpu_node["metadata"]["name"] == "n-0"
    assert cpu_node["metadata"]["labels"] == {"kubernetes.io/hostname": "n-0", "kubernetes.io/os": "linux"}
    assert cpu_node["status"]["capacity"] == {"cpu": "32000m", "memory": "262144Mi", "pods": str(NODE_MAX_PODS)}
    assert cpu_node["status"]["allocatable"] == cpu_node["status"]["capacity"]
    assert gpu_node["metadata"]["labels"][GPU_MODEL_LABEL] == "G2"
    assert gpu_node["status"]["allocatable"][GPU_RESOURCE] == "8"
    assert gpu_node["status"]["allocatable"]["cpu"] == "96000m"


def test_nodes_max_pods_override(tmp_path):
    p = write(tmp_path, "nodes.csv", NODE_HEADER + "n-0,32000,1024,0,\n")
    assert load_nodes(p, max_pods=110)[0]["status"]["allocatable"]["pods"] == "110"


@pytest.mark.parametrize("row, message", [
    ("n-0,32000,262144,x,\n", "gpu must be a non-negative integer"),
    ("n-0,-1,262144,0,\n", "cpu_milli must be a non-negative integer"),
    ("n-0,32000,262144\n", "expected 5 fields"),
    (",32000,262144,0,\n", "empty node name"),
    ("n-0,1,1,0,\nn-0,1,1,0,\n", "duplicate node name 'n-0' (first at line 2)"),
])
def test_nodes_malformed(tmp_path, row, message):
    p = write(tmp_path, "nodes.csv", NODE_HEADER + row)
    with pytest.raises(ManifestError) as e:
        load_nodes(p)
    assert message in str(e.value)
    assert str(e.value).startswith(f"{p}:")


def test_nodes_bad_header(tmp_path):
    p = write(tmp_path, "nodes.csv", "sn,cpu,memory_mib,gpu,model\nn,1,1,0,\n")
    with pytest.raises(ManifestError, match=r":1: CSV header lacks column\(s\) cpu_milli"):
        load_nodes(p)


def test_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="cannot read file"):
        load_nodes(tmp_path / "nope.csv")


# --------------------------------------------------------------------------- pods

def test_pods_parse_and_sort(tmp_path):
    p = write(tmp_path, "pods.csv", POD_HEADER
              + "p-late,4000,8192,0,0,,BE,Running,50,60,51\n"
              + "p-a,12000,16384,1,1000,,LS,Running,10,20,10\n"
              + "p-b,6000,12288,1,460,T4|P100,LS,Pending,10,30,\n")
    pods = load_pods(p)
    assert [x.name for x in pods] == ["p-a", "p-b", "p-late"]  # stable for equal times
    a, b, late = pods
    assert a == TracePod("p-a", 10.0, 20.0, 10.0, "Running", "LS", 12000, 16384, 1, 1000, [])
    assert b.scheduled_time is None and b.phase == "Pending"
    assert b.gpu_spec == ["T4", "P100"] and b.gpu_sharing and not a.gpu_sharing
    assert late.num_gpu == 0 and late.gpu_milli == 0


def test_to_pod_whole_gpu():
    pod = TracePod("p", 0.0, None, None, "Running", "LS", 12000, 16384, 1, 1000).to_pod()
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    assert pod["metadata"]["name"] == "p" and pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["labels"] == {"app": "p"}
    assert pod["metadata"]["annotations"] == {QOS_ANNOTATION: "LS"}
    (c,) = pod["spec"]["containers"]
    assert c["name"] == "main" and c["image"] == "pause"
    assert c["resources"]["requests"] == {"cpu": "12000m", "memory": "16384Mi", GPU_RESOURCE: "1"}
    assert c["resources"]["limits"] == {GPU_RESOURCE: "1"}
    assert "nodeName" not in pod["spec"] and "affinity" not in pod["spec"]


def test_to_pod_multi_gpu_and_cpu_only():
    multi = TracePod("m", 0.0, None, None, None, None, 1000, 1024, 8, 1000).to_pod()
    assert multi["spec"]["containers"][0]["resources"]["requests"][GPU_RESOURCE] == "8"
    assert "annotations" not in multi["metadata"]  # no qos column, not sharing
    cpu = TracePod("c", 0.0, None, None, None, "BE", 8000, 0, 0, 0).to_pod()
    res = cpu["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "8000m", "memory": "0Mi"}}


def test_to_pod_sharing_and_gpu_spec():
    pod = TracePod("s", 0.0, None, None, "Running", "BE", 6000, 12288, 1, 460, ["V100M16", "V100M32"]).to_pod()
    assert pod["spec"]["containers"][0]["resources"]["requests"][GPU_RESOURCE] == "1"
    assert pod["metadata"]["annotations"][GPU_MILLI_ANNOTATION] == "460"
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": ["V100M16", "V100M32"]}]}]


def test_gpu_milli_normalised(tmp_path):
    p = write(tmp_path, "pods.csv", POD_HEADER
              + "zero,1000,1,0,500,,BE,Running,0,1,0\n"   # gpu_milli ignored without GPUs
              + "multi,1000,1,4,0,,BE,Running,0,1,0\n")   # several GPUs are whole GPUs
    zero, multi = load_pods(p)
    assert (zero.num_gpu, zero.gpu_milli) == (0, 0)
    assert (multi.num_gpu, multi.gpu_milli) == (4, 1000)


def test_empty_deletion_time(tmp_path):
    p = write(tmp_path, "pods.csv", POD_HEADER + "p,1000,1,0,0,,BE,Running,5,,7\n")
    (pod,) = load_pods(p)
    assert pod.deletion_time is None and pod.scheduled_time == 7.0


def test_minimal_columns_like_multigpu20(tmp_path):
    p = write(tmp_path, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
              "b,1000,1,2,1000\na,1000,1,1,300\n")
    b, a = load_pods(p)  # all created at 0: file order kept
    assert (b.name, a.name) == ("b", "a")
    assert a.creation_time == 0.0 and a.deletion_time is None and a.scheduled_time is None
    assert a.phase is None and a.qos is None and a.gpu_spec == []


@pytest.mark.parametrize("row, message", [
    ("p,1000,1,1,0,,BE,Running,0,1,0\n", "gpu_milli must be 1..1000 when num_gpu is 1, got 0"),
    ("p,1000,1,1,1500,,BE,Running,0,1,0\n", "gpu_milli must be 1..1000"),
    ("p,1.5,1,0,0,,BE,Running,0,1,0\n", "cpu_milli must be a non-negative integer, got '1.5'"),
    ("p,1000,,0,0,,BE,Running,0,1,0\n", "memory_mib must be a non-negative integer, got ''"),
    ("p,1000,1,0,0,,BE,Running,10,5,10\n", "deletion_time 5 is before creation_time 10"),
    ("p,1000,1,0,0,,BE,Running,10,20,5\n", "scheduled_time 5 is before creation_time 10"),
    ("p,1000,1,0,0,,BE,Running,,20,5\n", "creation_time is empty"),
    ("p,1000,1,0,0,,BE,Running,abc,20,5\n", "creation_time must be a number of seconds"),
    ("p,1000,1,1,100,T4|,BE,Running,0,1,0\n", "has an empty model name"),
    ("p,1000,1,0,0,,BE,Running,0,1\n", "expected 11 fields"),
    (",1000,1,0,0,,BE,Running,0,1,0\n", "empty pod name"),
])
def test_pods_malformed(tmp_path, row, message):
    p = write(tmp_path, "pods.csv", POD_HEADER + "ok,1000,1,0,0,,BE,Running,0,1,0\n" + row)
    with pytest.raises(ManifestError) as e:
        load_pods(p)
    assert str(e.value).startswith(f"{p}:3: ")
    assert message in str(e.value)


def test_duplicate_pod_names(tmp_path):
    p = write(tmp_path, "pods.csv", POD_HEADER + "p,1,1,0,0,,BE,Running,0,1,0\n\np,1,1,0,0,,BE,Running,0,1,0\n")
    with pytest.raises(ManifestError, match=r":4: duplicate pod name 'p' \(first at line 2\)"):
        load_pods(p)


def test_pods_missing_required_column(tmp_path):
    p = write(tmp_path, "pods.csv", "name,cpu_milli,memory_mib,num_gpu\np,1,1,0\n")
    with pytest.raises(ManifestError, match=r":1: CSV header lacks column\(s\) gpu_milli"):
        load_pods(p)


# --------------------------------------------------------------------------- real data

needs_data = pytest.mark.skipif(
    not (DATA / "openb_pod_list_default.csv").exists(),
    reason=f"Alibaba openb trace not found at {DATA} (see shared/data/alibaba-openb-v2023/README.md)",
)


@needs_data
def test_real_trace_counts():
    nodes = load_nodes(DATA / "openb_node_list_all_node.csv")
    assert len(nodes) == 1523
    assert sum(int(n["status"]["allocatable"].get(GPU_RESOURCE, "0")) for n in nodes) == 6212
    assert len(load_nodes(DATA / "openb_node_list_gpu_node.csv")) == 1213

    pods = load_pods(DATA / "openb_pod_list_default.csv")
    assert len(pods) == 8152
    assert sum(p.scheduled_time is None for p in pods) == 897  # pending in production
    assert round(100 * sum(p.num_gpu == 0 for p in pods) / len(pods)) == 13
    assert round(100 * sum(p.gpu_sharing for p in pods) / len(pods)) == 38
    assert all(a.creation_time <= b.creation_time for a, b in zip(pods, pods[1:]))

    # NODE_MAX_PODS never binds: even the largest node full of the smallest pods fits.
    smallest_cpu = min(p.cpu_milli for p in pods)
    largest_cpu = max(int(n["status"]["allocatable"]["cpu"][:-1]) for n in nodes)
    assert largest_cpu // smallest_cpu <= NODE_MAX_PODS
    assert largest_cpu // smallest_cpu > 110  # ...which the kubelet default would not allow


@needs_data
@pytest.mark.parametrize("name, count", [("gpuspec10", 8152), ("multigpu20", 8324), ("cpu050", 7439)])
def test_real_trace_variants(name, count):
    pods = load_pods(DATA / f"openb_pod_list_{name}.csv")
    assert len(pods) == count
    assert all(a.creation_time <= b.creation_time for a, b in zip(pods, pods[1:]))
    if name == "gpuspec10":
        constrained = [p for p in pods if p.gpu_spec]
        assert constrained and all(p.num_gpu > 0 for p in constrained)
        assert any(len(p.gpu_spec) > 1 for p in constrained)
