"""Reading manifests as raw documents."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kubesched.errors import ManifestError
from kubesched.sim.manifests import (
    RawObject,
    check_duplicates,
    is_namespaced,
    load_manifests,
    parse_manifest_text,
    write_list,
)

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: c
    image: nginx:1.27
"""


def write(tmp_path: Path, rel: str, text: str) -> str:
    p = tmp_path / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


def error(paths) -> str:
    with pytest.raises(ManifestError) as e:
        load_manifests(paths)
    return str(e.value)


# --------------------------------------------------------------------------- reading

def test_multi_document_yaml_with_lines(tmp_path):
    f = write(tmp_path, "a.yaml", "# leading comment\n" + POD.format(name="p1") + "---\n---\n# only a comment\n---\n"
              + POD.format(name="p2") + "...\n")
    objs = load_manifests([f])
    assert [(o.kind, o.api_version, o.name, o.namespace) for o in objs] == [
        ("Pod", "v1", "p1", "default"), ("Pod", "v1", "p2", "default")]
    assert [o.source for o in objs] == [f"{f}:2", f"{f}:14"]
    assert [o.index for o in objs] == [0, 1]
    assert objs[0].data["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert objs[0].data["metadata"]["namespace"] == "default"  # defaulted in data


def test_cluster_scoped_kinds_get_no_namespace(tmp_path):
    f = write(tmp_path, "n.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
              "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n")
    node, pc = load_manifests([f])
    assert "namespace" not in node.data["metadata"] and node.namespace is None
    assert "namespace" not in pc.data["metadata"]
    assert is_namespaced("Deployment") and is_namespaced("MyCustomThing") and not is_namespaced("Namespace")


def test_explicit_namespace_kept(tmp_path):
    f = write(tmp_path, "a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: web}\n")
    (o,) = load_manifests([f])
    assert o.key == ("Service", "web", "s") and o.describe() == "Service web/s"


def test_list_expansion_with_item_lines(tmp_path):
    f = write(tmp_path, "l.yaml", """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: web
""")
    n1, p = load_manifests([f])
    assert (n1.kind, n1.source) == ("Node", f"{f}:4")
    assert (p.kind, p.namespace, p.source) == ("Pod", "web", f"{f}:7")


def test_typed_list_items_inherit_kind(tmp_path):
    f = write(tmp_path, "l.yaml", "apiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: '1'}\nitems:\n"
              "- metadata: {name: a}\n- metadata: {name: b}\n---\napiVersion: v1\nkind: NodeList\nitems: null\n")
    a, b = load_manifests([f])
    assert (a.kind, a.api_version, a.name, a.source) == ("Pod", "v1", "a", f"{f}:5")
    assert b.data["kind"] == "Pod"


def test_nested_list(tmp_path):
    f = write(tmp_path, "l.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n"
              "  - {apiVersion: v1, kind: Node, metadata: {name: n1}}\n")
    (n,) = load_manifests([f])
    assert n.name == "n1" and n.source == f"{f}:7"


def test_json_single_object_and_list(tmp_path):
    one = write(tmp_path, "one.json", "\n\n" + json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}))
    lst = write(tmp_path, "list.json", json.dumps({
        "apiVersion": "v1", "kind": "List", "metadata": {"note": "a [tricky] {string}"},
        "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"x": "]}"}}}
                  for i in range(3)]}, indent=2))
    objs = load_manifests([one, lst])
    assert [o.name for o in objs] == ["p", "n0", "n1", "n2"]
    assert objs[0].source == f"{one}:3"
    lines = [int(o.source.rsplit(":", 1)[1]) for o in objs[1:]]
    text = Path(lst).read_text().splitlines()
    for line in lines:
        assert text[line - 1].strip() == "{"
    assert lines == sorted(set(lines))


def test_directory_recursive_sorted(tmp_path):
    write(tmp_path, "d/b.yaml", POD.format(name="b"))
    write(tmp_path, "d/a.yml", POD.format(name="a"))
    write(tmp_path, "d/sub/c.json", json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}))
    write(tmp_path, "d/notes.txt", "not yaml: [")
    write(tmp_path, "d/.hidden/x.yaml", "broken: [")
    objs = load_manifests([str(tmp_path / "d")])
    assert [o.name for o in objs] == ["a", "b", "c"]
    assert [o.index for o in objs] == [0, 1, 2]


def test_same_file_twice_read_once(tmp_path):
    f = write(tmp_path, "d/a.yaml", POD.format(name="a"))
    assert len(load_manifests([str(tmp_path / "d"), f])) == 1


def test_timestamps_stay_strings(tmp_path):
    f = write(tmp_path, "a.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
              "  creationTimestamp: 2024-05-01T10:00:00Z\n")
    (o,) = load_manifests([f])
    assert o.data["metadata"]["creationTimestamp"] == "2024-05-01T10:00:00Z"


def test_raw_object_is_frozen():
    o = RawObject("Pod", "v1", {"metadata": {"name": "p", "namespace": "default"}}, "x:1", 0)
    with pytest.raises(AttributeError):
        o.kind = "Node"  # type: ignore[misc]


# --------------------------------------------------------------------------- errors

def test_yaml_syntax_error_has_line(tmp_path):
    f = write(tmp_path, "bad.yaml", POD.format(name="ok") + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: 1\n")
    msg = error([f])
    assert msg.startswith(f"{f}:14: invalid YAML:")
    assert "\n" not in msg


def test_duplicate_key_is_error(tmp_path):
    f = write(tmp_path, "dup.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n")
    assert error([f]) == f"{f}:5: invalid YAML: duplicate key 'name'"


def test_json_syntax_error_has_line(tmp_path):
    f = write(tmp_path, "bad.json", '{\n  "kind": "Pod",\n  "apiVersion": "v1"\n  "metadata": {}\n}\n')
    assert error([f]).startswith(f"{f}:4: invalid JSON:")


@pytest.mark.parametrize("text, line, message", [
    ("- a\n- b\n", 1, "expected a Kubernetes object (a mapping), got a list"),
    ("just a string\n", 1, "expected a Kubernetes object (a mapping), got a string"),
    ("apiVersion: v1\nmetadata: {name: x}\n", 1, "object has no kind"),
    ("kind: Pod\nmetadata: {name: x}\n", 1, "Pod object has no apiVersion"),
    ("apiVersion: v1\nkind: Pod\nspec: {}\n", 1, "Pod object has no metadata.name"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {generateName: x-}\n", 1,
     "Pod object has no metadata.name (generateName is not supported)"),
    ("apiVersion: v1\nkind: Pod\nmetadata: [1]\n", 1, "Pod metadata must be a mapping, got a list"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: 3}\n", 1, "Pod x: metadata.namespace must be a string, got a number"),
    ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", 1, "List.items must be a list, got a mapping"),
    ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- 42\n", 7,
     "expected a Kubernetes object (a mapping), got a number"),
    ("x: 1\n---\napiVersion: v1\nkind: Pod\n", 1, "object has no kind"),
])
def test_invalid_documents(tmp_path, text, line, message):
    f = write(tmp_path, "bad.yaml", text)
    assert error([f]) == f"{f}:{line}: {message}"


def test_missing_path(tmp_path):
    p = str(tmp_path / "nope.yaml")
    assert error([p]) == f"{p}: no such file or directory"


def test_empty_directory_is_error(tmp_path):
    (tmp_path / "empty").mkdir()
    assert "holds no manifest files" in error([str(tmp_path / "empty")])


def test_not_utf8(tmp_path):
    p = tmp_path / "bin.yaml"
    p.write_bytes(b"apiVersion: v1\nkind: \xff\xfe\n")
    assert error([str(p)]) == f"{p}:2: file is not valid UTF-8"


def test_duplicates_name_both_sources(tmp_path):
    a = write(tmp_path, "a.yaml", POD.format(name="p"))
    b = write(tmp_path, "b.yaml", "# x\n" + POD.format(name="p"))
    assert error([a, b]) == f"{b}:2: duplicate Pod default/p: already defined at {a}:1"
    objs = load_manifests([a, b], allow_duplicates=True)
    assert len(objs) == 2
    with pytest.raises(ManifestError):
        check_duplicates(objs)


def test_same_name_different_namespace_or_kind_is_fine(tmp_path):
    f = write(tmp_path, "a.yaml", POD.format(name="x") + "---\n"
              + "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: web}\n---\n"
              + "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n---\n"
              + "apiVersion: v1\nkind: Node\nmetadata: {name: x}\n")
    assert len(load_manifests([f])) == 4


# --------------------------------------------------------------------------- writing

def test_write_list_yaml_round_trip(tmp_path):
    objs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "web"},
             "spec": {"z": 1, "a": "110"}}]
    buf = io.StringIO()
    write_list(objs, "yaml", buf)
    text = buf.getvalue()
    assert text.startswith("apiVersion: v1\nkind: List\nitems:\n")
    assert text.index("z: 1") < text.index("a: '110'")  # key order kept, strings stay strings
    f = write(tmp_path, "out.yaml", text)
    (o,) = load_manifests([f])
    assert o.data == objs[0]


def test_write_list_json_round_trip(tmp_path):
    objs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(2)]
    buf = io.StringIO()
    write_list(objs, "json", buf)
    assert json.loads(buf.getvalue()) == {"apiVersion": "v1", "kind": "List", "items": objs}
    f = write(tmp_path, "out.json", buf.getvalue())
    assert [o.data for o in load_manifests([f])] == objs
    with pytest.raises(ValueError):
        write_list(objs, "xml", buf)  # type: ignore[arg-type]


def test_parse_manifest_text():
    (o,) = parse_manifest_text(POD.format(name="p"), "inline.yaml")
    assert o.source == "inline.yaml:1"


def test_many_objects_fast_enough(tmp_path):
    docs = "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: ns}}\n"
                   f"spec:\n  containers:\n  - name: c\n    image: pause\n    resources: {{requests: {{cpu: 100m}}}}\n"
                   for i in range(2000))
    f = write(tmp_path, "many.yaml", docs)
    objs = load_manifests([f])
    assert len(objs) == 2000 and objs[-1].source == f"{f}:{1999 * 9 + 2}"


# --------------------------------------------------------------------------- the quickstart example

def test_quickstart_example_loads():
    objs = load_manifests([str(QUICKSTART)])
    by_kind: dict[str, list[RawObject]] = {}
    for o in objs:
        by_kind.setdefault(o.kind, []).append(o)
    assert set(by_kind) == {"Namespace", "PriorityClass", "Service", "Node", "Pod"}
    assert {o.name for o in by_kind["Service"]} == {"frontend", "api", "checkout", "pgbouncer"}
    assert {o.name for o in by_kind["Namespace"]} == {"default", "kube-system", "web", "data", "batch", "ml"}
    pcs = {o.name: o.data for o in by_kind["PriorityClass"]}
    assert pcs["system-cluster-critical"]["value"] == 2000000000
    assert pcs["high-priority"]["value"] == 1000000 and pcs["low-priority"]["value"] == 100
    assert [n for n, d in pcs.items() if d.get("globalDefault")] == ["default-priority"]
    assert pcs["default-priority"]["value"] == 1000

    nodes = {o.name: o.data for o in by_kind["Node"]}
    assert 45 <= len(nodes) <= 55
    zones = {d["metadata"]["labels"]["topology.kubernetes.io/zone"] for d in nodes.values()}
    assert zones == {"zone-a", "zone-b", "zone-c"}
    cordoned = [n for n, d in nodes.items() if d["spec"].get("unschedulable")]
    assert len(cordoned) == 1
    gpu = [n for n, d in nodes.items() if "nvidia.com/gpu" in d["status"]["allocatable"]]
    assert 4 <= len(gpu) <= 6
    cp = [n for n, d in nodes.items() if "node-role.kubernetes.io/control-plane" in d["metadata"]["labels"]]
    assert len(cp) == 3

    pods = [o for o in by_kind["Pod"]]
    bound = [o for o in pods if o.data["spec"].get("nodeName")]
    pending = [o for o in pods if not o.data["spec"].get("nodeName")]
    assert 100 <= len(bound) <= 140 and 60 <= len(pending) <= 100
    for o in bound:
        assert o.data["spec"]["nodeName"] in nodes, o.source
    namespaces = {o.name for o in by_kind["Namespace"]}
    for o in pods:
        assert o.namespace in namespaces, o.source
        pc = o.data["spec"].get("priorityClassName")
        assert pc is None or pc in pcs, o.source
    assert any(o.data["spec"].get("schedulingGates") for o in pending)
    assert any(o.data["spec"].get("schedulerName") == "other-scheduler" for o in pending)
    check_duplicates(objs)


def test_quickstart_yaml_is_what_generate_writes(tmp_path):
    """The committed YAML is exactly what generate.py produces (it was not edited by hand)."""
    import runpy

    gen = runpy.run_path(str(QUICKSTART / "generate.py"))
    files = gen["render_all"]()
    for name, text in files.items():
        assert (QUICKSTART / name).read_text() == text, f"{name} is stale: run examples/quickstart/generate.py"


def test_write_list_yaml_has_no_aliases():
    shared = {"app": "x"}
    objs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "labels": shared}} for i in range(2)]
    buf = io.StringIO()
    write_list(objs, "yaml", buf)
    assert "&" not in buf.getvalue() and "*" not in buf.getvalue()


def test_anchors_and_merge_keys_still_work(tmp_path):
    # the fast event-based reader hands such files to the full loader
    f = write(tmp_path, "a.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n"
              "  metadata:\n    name: a\n    labels: &l {app: x}\n- apiVersion: v1\n  kind: Pod\n"
              "  metadata:\n    name: b\n    labels:\n      <<: *l\n      tier: web\n")
    a, b = load_manifests([f])
    assert b.data["metadata"]["labels"] == {"app": "x", "tier": "web"}
    assert (a.source, b.source) == (f"{f}:4", f"{f}:9")


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: '1', b: 2, c: true, d: null, e: 1.5, f: ~, g: 0x1F}}\n",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- apiVersion: v1\n  kind: List\n"
    "  items:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: b, annotations: {x: !!str 1}}\n",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {? [a, b] : c}\n",
    "---\n\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, when: 2024-01-01}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: yes, b: 'on', c: 0644}\n",
    "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n",
    "# c\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n--- # two\napiVersion: v1\nkind: Pod\n"
    "metadata: {name: q}\n...\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {u: 'http://x?a=1&b=*'}}\n",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {[a, b]: c}}\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {'k:{\"a\":1}': x, b: [on, 017]}}\n",
])
def test_fast_and_full_yaml_readers_agree(text):
    from kubesched.sim import manifests as m

    def run(fn):
        col = m._Collector()
        try:
            fn(text, "t.yaml", col)
        except ManifestError as e:
            return str(e)
        return [(o.source, o.data) for o in col.out]

    assert run(m._parse_yaml) == run(m._parse_yaml_full)
