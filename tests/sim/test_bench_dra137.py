"""scheduler_perf's v1.37.2 DRA test cases (``kubesched.sim.bench_dra137``) and the Go template
renderer they need (``kubesched.sim.bench_gotemplate``).

The tables are checked against upstream's ``dra/**/performance-config.yaml`` and templates (when the
v1.37.2 module source is on this machine); the renderer against Go text/template's documented
semantics (``text/template`` package docs: range over an integer, variables' scope, ``or``, pipelines,
missing keys) and ``operations.go``'s functions; the ops against what ``dra.go`` / ``executor.go`` /
``operations.go`` do; the small workloads run end to end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kubesched.sim.bench import WORKLOADS, execute
from kubesched.sim.bench_dra137 import (
    DRA137_WORKLOADS,
    AllocClaims,
    AnyOp,
    DRAPodsOp,
    execute_dra137,
    resolve_param,
)
from kubesched.sim.bench_dra_templates import DRA_TEMPLATES
from kubesched.sim.bench_events import StartCollecting, StopCollecting
from kubesched.sim.bench_gotemplate import render_template
from kubesched.sim.bench_podgroup import _CASES, CreatePodGroups, NodesOp, VirtualTimer

PERF = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2")) / \
    "test/integration/scheduler_perf"
needs_upstream = pytest.mark.skipif(not PERF.is_dir(), reason="k8s.io/kubernetes@v1.37.2 module source not present")

TOPICS = ["dra", "dra/compatibilitygroups", "dra/consumablecapacity", "dra/devicetaints", "dra/extendedresource",
          "dra/extendedresource/scoring", "dra/listattributes", "dra/partitionabledevices", "dra/prioritizedlist",
          "dra/workloadresourceclaims"]
NO_MEASURE_PODS = {"SchedulingWithResourceClaimTemplate/empty_100nodes",
                   "SchedulingWithResourceClaimTemplate/empty_200nodes"}
"""Upstream sets no ``measurePods`` there (see the module docstring): 10 here."""


# ───────────────────────────── the tables are upstream's ─────────────────────────────


@needs_upstream
@pytest.mark.parametrize("path", sorted(DRA_TEMPLATES))
def test_templates_are_upstream_verbatim(path):
    assert DRA_TEMPLATES[path] == (PERF / path).read_text()


def _norm(topic, rel):
    return os.path.normpath(f"{topic}/{rel}") if rel else None


def _param(v, params):
    """``resolveTemplateParams``, written from its doc comment."""
    if isinstance(v, str) and v.startswith("$"):
        name, _, default = v[1:].partition("|")
        if name in params:
            return params[name]
        assert "|" in v, v
        return yaml.safe_load(default)
    return v


def _count(up, params, key):
    if "count" in up:
        return up["count"]
    if "countParam" in up:
        name = up["countParam"][1:]
        if name not in params and key in NO_MEASURE_PODS:
            return 10
        return params[name]
    return 1


def _check(topic, up, mine, params, key):
    code = up["opcode"]
    tp = tuple((k, _param(v, params)) for k, v in (up.get("templateParams") or {}).items())
    if code == "createNodes":
        assert isinstance(mine, NodesOp) and mine.count == _count(up, params, key), key
        assert mine.path == _norm(topic, up.get("nodeTemplatePath")), key
    elif code == "createAny":
        assert isinstance(mine, AnyOp), key
        assert (mine.path, mine.count, mine.namespace) == (
            _norm(topic, up["templatePath"]), _count(up, params, key), up.get("namespace", "")), key
        assert dict(mine.params) == dict(tp), key
    elif code == "allocResourceClaims":
        assert mine == AllocClaims(up["namespace"]), key
    elif code == "createPods":
        assert isinstance(mine, DRAPodsOp), key
        assert (mine.count, mine.namespace, mine.path, mine.collect_metrics) == (
            _count(up, params, key), up.get("namespace"), _norm(topic, up["podTemplatePath"]),
            bool(up.get("collectMetrics"))), key
        assert dict(mine.params) == dict(tp), key
        steady = bool(params[up["steadyStateParam"][1:]]) if "steadyStateParam" in up else False
        assert mine.steady_state == steady, key
        if steady:
            assert mine.duration_s == float(str(params[up["durationParam"][1:]]).rstrip("s")), key
    elif code == "createPodGroups":
        assert isinstance(mine, CreatePodGroups), key
        assert (mine.count, mine.namespace, mine.path) == (
            _count(up, params, key), up["namespace"], _norm(topic, up["templatePath"])), key
    elif code == "startCollectingMetrics":
        assert isinstance(mine, StartCollecting) and list(mine.namespaces) == up["namespaces"], key
    elif code == "stopCollectingMetrics":
        assert isinstance(mine, StopCollecting), key
    else:  # pragma: no cover
        pytest.fail(f"{key}: opcode {code} not expected")


def _upstream_cases():
    for topic in TOPICS:
        for case in yaml.safe_load((PERF / topic / "performance-config.yaml").read_text()):
            yield topic, case


@needs_upstream
def test_every_dra_workload_is_upstreams():
    seen = set()
    for topic, case in _upstream_cases():
        for wl in case["workloads"]:
            key = f"{case['name']}/{wl['name']}"
            seen.add(key)
            assert key in WORKLOADS, key
            w = WORKLOADS[key]
            assert w is DRA137_WORKLOADS[key] and w.runner is execute_dra137, key
            params = wl.get("params") or {}
            assert len(w.ops) == len(case["workloadTemplate"]), key
            for up, mine in zip(case["workloadTemplate"], w.ops):
                _check(topic, up, mine, params, key)
            assert set(w.labels) == set(wl.get("labels") or ()), key
            gates = {**(case.get("featureGates") or {}), **(wl.get("featureGates") or {})}
            assert dict(_CASES[key].gates) == gates, key
            assert _CASES[key].config == _norm(topic, case.get("schedulerConfigPath")), key
    assert seen == set(DRA137_WORKLOADS)
    assert len(seen) == 78  # 75 new + SchedulingWithResourceClaimTemplate's fast, 2000pods_200nodes, 5000pods_500nodes


@needs_upstream
def test_v137_thresholds_apply():
    from kubesched.sim.bench_runner import upstream_threshold

    assert upstream_threshold(WORKLOADS["SchedulingWithResourceClaimTemplate/full_500nodes"]) == 60
    assert upstream_threshold(WORKLOADS["ExtendedResource/Explicit_50classes_5000pods_500nodes"]) == 130


def test_resolve_param():
    """``resolveTemplateParams``: ``$name`` is the workload's parameter; after ``|`` a YAML default
    (empty: null); a missing parameter without one is an error."""
    p = {"numDevices": 64, "selectors": None}
    assert resolve_param("$numDevices|10", p) == 64
    assert resolve_param("$numPCIRoots|2", p) == 2
    assert resolve_param("$constraints|", p) is None
    assert resolve_param("$selectors|[1]", p) is None  # present (null) wins over the default
    assert resolve_param("$x|plain string", p) == "plain string"
    assert resolve_param(10, p) == 10
    with pytest.raises(KeyError, match="numRequests"):
        resolve_param("$numRequests", p)


# ───────────────────────────── Go text/template ─────────────────────────────


@pytest.mark.parametrize("text,env,want", [
    # range over an integer (Go 1.22+): 0…n-1, the dot is the element
    ("{{range 3}}[{{.}}]{{end}}", {}, "[0][1][2]"),
    ("{{range $i := 2}}{{$i}}{{end}}", {}, "01"),
    ("{{range $i, $v := .l}}{{$i}}={{$v}} {{end}}", {"l": ["a", "b"]}, "0=a 1=b "),
    ("{{range .m}}{{.}}{{end}}", {"m": {"b": 2, "a": 1}}, "12"),  # maps in key order
    ("{{range 0}}x{{else}}none{{end}}", {}, "none"),
    # variables: declared, assigned, scoped to their block; $ is the data
    ("{{$n := 2}}{{range $n}}{{$n}}{{end}}", {}, "22"),
    ("{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}", {}, "2"),
    ("{{range 1}}{{$.a}}{{end}}", {"a": "root"}, "root"),
    # or: the first true argument, else the last; pipelines pass the value last
    ("{{or .a 10}}", {}, "10"),
    ("{{or .a 10}}", {"a": 3}, "3"),
    ("{{(or .n 1) | Int}}", {"n": "4"}, "4"),
    ("{{$s := (or .s nil) | JSON}}{{$s}}", {}, "null"),
    ("{{.l | JSON}}", {"l": [{"b": 1, "a": "x && y >= 1"}]}, '[{"a":"x && y >= 1","b":1}]'),
    ("{{and 1 0 2}}|{{and 1 2}}|{{not 0}}", {}, "0|2|true"),
    # comparisons
    ("{{if ge 3 (2 | Int)}}y{{else}}n{{end}}", {}, "y"),
    ("{{if lt .a 2}}y{{else}}n{{end}}", {"a": 2}, "n"),
    ("{{if eq .class \"example.com/gpu\"}}gpu{{end}}", {"class": "example.com/gpu"}, "gpu"),
    ("{{if eq 1 2 3 1}}any{{end}}", {}, "any"),
    ("{{if .a}}A{{else if .b}}B{{else}}C{{end}}", {"b": 1}, "B"),
    # upstream's functions (operations.go)
    ("{{Mod 7 3}} {{Mod -7 3}} {{DivideInt 7 2}} {{AddInt 1 2 3}} {{MultiplyInt 2 3}} {{SubtractInt 1 3}}", {},
     "1 -1 3 6 6 -2"),
    # missing keys print <no value>; trim markers; comments
    ("{{.missing}}", {}, "<no value>"),
    ("a  {{- 1 -}}  b{{/* note */}}", {}, "a1b"),
    ('{{"q\\"s"}}{{`raw`}}', {}, 'q"sraw'),
])
def test_render_template(text, env, want):
    assert render_template(text, env) == want


@pytest.mark.parametrize("text,match", [
    ("{{with .a}}x{{end}}", "not supported"),
    ("{{range 2}}x", "missing {{end}}"),
    ("{{else}}", "unexpected"),
    ("{{$y}}", "undefined variable"),
    ("{{printf \"%d\" 1}}", "not defined"),
    ("{{1 2}}", "non-function"),
    ("{{range .s}}{{end}}", "can't iterate"),
    ("{{Mod 1 0}}", "divide by zero"),
    ("{{Int \"x\"}}", "cannot cast"),
])
def test_render_template_errors(text, match):
    with pytest.raises(ValueError, match=match):
        render_template(text, {"s": "str"})


@needs_upstream
def test_rendered_templates_parse():
    """Every DRA template renders to YAML of its kind with its ops' params (basic devices: numDevices
    devices, PCI roots cycling; claim template: numRequests requests with the selectors/constraints)."""
    slice_ = yaml.safe_load(render_template(DRA_TEMPLATES["dra/templates/resourceslice-basic-devices.yaml"],
                                            {"Index": 3, "Count": 5, "numDevices": 4, "numPCIRoots": 2}))
    assert slice_["spec"]["nodeName"] == "scheduler-perf-dra-3"
    devs = slice_["spec"]["devices"]
    assert [d["name"] for d in devs] == [f"basic-device-{i}" for i in range(4)]
    assert [d["attributes"]["resource.kubernetes.io/pciRoot"]["string"] for d in devs] == \
        ["pci0000:00", "pci0000:01", "pci0000:00", "pci0000:01"]
    tpl = yaml.safe_load(render_template(DRA_TEMPLATES["dra/templates/resourceclaimtemplate.yaml"], {
        "numRequests": 5, "selectors": None, "constraints": [{"matchAttribute": "resource.kubernetes.io/pciRoot"}]}))
    devices = tpl["spec"]["spec"]["devices"]
    assert [r["name"] for r in devices["requests"]] == [f"req-{i}" for i in range(5)]
    assert devices["constraints"] == [{"matchAttribute": "resource.kubernetes.io/pciRoot"}]
    assert devices["requests"][0]["exactly"]["selectors"] is None
    lst = yaml.safe_load(render_template(DRA_TEMPLATES["dra/templates/resourceslice-list-attributes-devices.yaml"], {
        "Index": 0, "numDevices": 3, "numNonMatchingDevices": 2, "numListValues": 2}))
    values = [d["attributes"]["dra.example.com/match"]["strings"] for d in lst["spec"]["devices"]]
    assert values[0] == ["device-0-value-0", "device-0-value-1"]
    assert values[2] == ["shared-value", "device-2-value-0", "device-2-value-1"]


# ───────────────────────────── the ops ─────────────────────────────


def _allocated(store, ns=None):
    out = []
    for c in store.list("ResourceClaim", ns):
        alloc = (c.get("status") or {}).get("allocation")
        if alloc:
            out += [(r["pool"], r["device"]) for r in alloc["devices"]["results"]]
    return out


def test_alloc_resource_claims_fills_the_cluster():
    """``allocResourceClaims``: every init claim allocated, each device once (full_100nodes: 990 of
    the 1000 devices); then exactly the 10 measured pods fit (the steady state keeps scheduling them)."""
    seen = {}

    def inspect(store, sched):
        seen["init"] = _allocated(store, "init")
        seen["all"] = _allocated(store)

    w = WORKLOADS["SchedulingWithResourceClaimTemplate/full_100nodes"]
    res = execute(w, seed=1, inspect=inspect, timer=VirtualTimer())
    assert len(seen["init"]) == 990 == len(set(seen["init"]))
    assert len(seen["all"]) == len(set(seen["all"])) <= 1000
    assert res.scheduled > 10 and res.attempts["error"] == 0


def test_alloc_resource_claims_partitionable_counters():
    """Partitionable/half_100nodes: 50 claims of 2 devices drawing on one counter set per node —
    each allocated claim takes both devices of a node (the counters allow nothing else)."""
    seen = {}

    def inspect(store, sched):
        seen["init"] = _allocated(store, "init")

    execute(WORKLOADS["Partitionable/half_100nodes"], seed=1, inspect=inspect, timer=VirtualTimer(attempt_s=1.0))
    pools = [p for p, _ in seen["init"]]
    assert len(pools) == 100 and all(pools.count(p) == 2 for p in pools)


def test_steady_state_replaces_scheduled_pods():
    """``createPodsSteadily``: 10 pods exist at all times; each scheduled one is deleted with its claim
    (devices freed) and replaced, until the duration has passed (virtual time here)."""
    seen = {}

    def inspect(store, sched):
        seen["pods"] = [k for k in store.pods if k.startswith("test/")]
        seen["claims"] = len(store.list("ResourceClaim", "test"))
        seen["allocated"] = _allocated(store, "test")

    res = execute(WORKLOADS["SchedulingWithResourceClaimTemplate/empty_100nodes"], seed=1, inspect=inspect,
                  timer=VirtualTimer(attempt_s=0.01))
    assert res.scheduled >= 900  # 10 s of virtual time at 10 ms an attempt
    assert len(seen["pods"]) == 10 and seen["claims"] == 10
    assert len(seen["allocated"]) == len(set(seen["allocated"]))


def test_create_any_namespaces_and_kinds():
    seen = {}

    def inspect(store, sched):
        seen["rule"] = store.list("DeviceTaintRule")
        seen["templates"] = [(t["metadata"]["namespace"], t["metadata"]["name"])
                             for t in store.list("ResourceClaimTemplate")]
        seen["slices"] = len(store.list("ResourceSlice"))

    res = execute(WORKLOADS["DeviceTaintToleration/fast"], seed=1, inspect=inspect)
    assert [r["metadata"]["name"] for r in seen["rule"]] == ["taint-all-devices"]
    assert sorted(seen["templates"]) == [("init", "test-claim-template"), ("test", "test-claim-template")]
    assert seen["slices"] == 1
    assert res.scheduled == 10  # the claims tolerate the rule's taint


@pytest.mark.parametrize("key,pods", [
    ("SchedulingWithResourceClaimTemplate/fast", 10),
    ("SchedulingWithResourceClaimTemplate/selector_fast", 10),
    ("SchedulingWithResourceClaimTemplate/match_fast", 2),
    ("SchedulingWithResourceClaim/fast", 10),
    ("CompatibilityGroups/fast", 1),
    ("ConsumableCapacity/fast", 1),
    ("ConsumableCapacity/fast_with_DRAPartitionableDevices", 1),
    ("DeviceTaintToleration/fast", 10),
    ("ExtendedResource/fast", 10),
    ("ExtendedResourceScoring/fast", 10),
    ("SchedulingWithResourceClaimTemplateListAttributes/fast", 1),
    ("Partitionable/fast", 1),
    ("PartitionableBacktracking/fast", 1),
    ("FirstAvailable/fast", 10),
    ("SharedPodGroupResourceClaim/fast", 10),
    ("SharedPodGroupResourceClaimTemplate/fast", 10),
])
def test_fast_workloads_schedule_every_pod(key, pods):
    res = execute(WORKLOADS[key], seed=1)
    assert res.scheduled == pods and res.unschedulable_pods == 0 and res.attempts["error"] == 0


def test_match_fast_allocates_one_pci_root_per_pod():
    """match_fast: 5 requests with matchAttribute pciRoot on 10 devices alternating between 2 roots —
    each pod gets the 5 devices of one root."""
    seen = {}

    def inspect(store, sched):
        seen["claims"] = [[r["device"] for r in c["status"]["allocation"]["devices"]["results"]]
                          for c in store.list("ResourceClaim", "test")]

    execute(WORKLOADS["SchedulingWithResourceClaimTemplate/match_fast"], seed=1, inspect=inspect)
    roots = [{int(d.rsplit("-", 1)[1]) % 2 for d in devs} for devs in seen["claims"]]
    assert sorted(len(d) for d in seen["claims"]) == [5, 5] and all(len(r) == 1 for r in roots)
    assert roots[0] != roots[1]


def test_cel_device_allow_multiple_allocations():
    """DRAConsumableCapacity's CEL field (``cel/compile.go``: ``device.allowMultipleAllocations``, false
    when unset) — deviceclass-consumablecapacity.yaml selects on it."""
    from kubesched.plugins.dra_structured import device_matches

    expr = 'device.driver == "d" && device.allowMultipleAllocations == true'
    assert device_matches("d", {"name": "a", "allowMultipleAllocations": True}, expr) is True
    assert device_matches("d", {"name": "b"}, expr) is False
