"""The allocator's first-fit memo (per pool, kept while the pool's in-use version is the same)
against the plain first-fit scan (no versions: every node scans its pools' devices).

Both must give the same outcome — the same allocation results, None, or the same error — on
every node after every change of the devices in use, for any pools, devices (attributes, taints,
counters, ``skipNodeOperations``), single-request claims and DRA features. The upstream behaviour
both follow is the depth-first search of ``allocator_incubating.go`` (v0.37.2), which for one
ExactCount request takes the first free, selectable devices in pool order.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dra_structured import Allocator, AllocatorError, Features
from kubesched.testing.wrappers import MakeNode

DRIVER = "gpu.example.com"
NODES = ["node-0", "node-1", "node-2"]
CLASS = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
FEATURES = [Features(), Features(device_taints=True), Features(partitionable_devices=True, device_taints=True),
            Features(optional_node_operations=True)]
TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}

device = st.fixed_dictionaries({
    "model": st.sampled_from(["a", "b"]),
    "tainted": st.booleans(),
    "counters": st.integers(0, 2),  # 0: none, else the memory it consumes from its pool's counter set
})
pool = st.fixed_dictionaries({
    "node": st.sampled_from([*NODES, "*"]),  # "*": allNodes
    "devices": st.lists(device, min_size=1, max_size=5),
    "counter_slice": st.booleans(),
    "skip_ops": st.booleans(),
})


def slices_of(pools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, p in enumerate(pools):
        count = 2 if p["counter_slice"] else 1
        devices = []
        for j, d in enumerate(p["devices"]):
            dev: dict[str, Any] = {"name": f"d{j}", "attributes": {"model": {"string": d["model"]}}}
            if d["tainted"]:
                dev["taints"] = [TAINT]
            if d["counters"]:
                memory = {"memory": {"value": f"{d['counters']}Gi"}}
                dev["consumesCounters"] = [{"counterSet": "cs", "counters": memory}]
            devices.append(dev)
        spec: dict[str, Any] = {"driver": DRIVER, "pool": {"name": f"pool-{i}", "generation": 1,
                                                          "resourceSliceCount": count}, "devices": devices}
        if p["node"] == "*":
            spec["allNodes"] = True
        else:
            spec["nodeName"] = p["node"]
        if p["skip_ops"]:
            spec["skipNodeOperations"] = ["Prepare"]
        out.append({"metadata": {"name": f"s{i}"}, "spec": spec})
        if p["counter_slice"]:
            cspec = {**{k: v for k, v in spec.items() if k != "devices"},
                     "sharedCounters": [{"name": "cs", "counters": {"memory": {"value": "3Gi"}}}]}
            out.append({"metadata": {"name": f"s{i}-counters"}, "spec": cspec})
    return out


def claim_of(count: int, model: str | None, tolerate: bool) -> dict[str, Any]:
    ex: dict[str, Any] = {"deviceClassName": "gpu", "count": count}
    if model:
        ex["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
    if tolerate:
        ex["tolerations"] = [{"key": "k", "operator": "Exists"}]
    return {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {"requests": [
        {"name": "req", "exactly": ex}]}}}


def outcome(a: Allocator, node: Any) -> Any:
    try:
        run = a.allocate_run(node)
    except AllocatorError as e:
        return ("error", e.message)
    if run is None:
        return None
    results = run.results()
    # what Score reads without building results (a replayed search answers from its picks)
    assert run.request_names() == [[r["request"] for r in res["devices"]["results"]] for res in results]
    return results


step = st.tuples(st.integers(1, 3), st.sampled_from([None, "a", "b"]), st.booleans(),  # the claim
                 st.sampled_from(NODES),  # the node whose allocation is taken (if any)
                 st.integers(0, 20))  # a device in use to release (index into the sorted in-use set)


@settings(max_examples=150, deadline=None)
@given(st.lists(pool, min_size=1, max_size=5), st.sampled_from(FEATURES), st.lists(step, min_size=1, max_size=8))
def test_first_fit_memo_matches_plain_scan(pools, features, steps):
    slices = slices_of(pools)
    nodes = {n: MakeNode().name(n).obj() for n in NODES}
    in_use: set[tuple[str, str, str]] = set()
    versions: dict[tuple[str, str], int] = {}

    def change(did: tuple[str, str, str], add: bool) -> None:  # as DRAManager._set_slot
        (in_use.add if add else in_use.discard)(did)
        versions[did[:2]] = versions.get(did[:2], 0) + 1

    for count, model, tolerate, take, release in steps:
        claim = claim_of(count, model, tolerate)
        memo = Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features, versions, {}, True)
        for name in NODES:
            plain = Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features)
            got, want = outcome(memo, nodes[name]), outcome(plain, nodes[name])
            assert got == want, name
            if name == take and isinstance(got, list):
                for r in got[0]["devices"]["results"]:
                    change((r["driver"], r["pool"], r["device"]), True)
        if in_use and release < len(in_use):
            change(sorted(in_use)[release], False)


def general_claim(count: int, model: str | None, match: bool, sub: bool) -> dict[str, Any]:
    """Two requests (the second one a ``firstAvailable`` list with ``sub``), optionally a
    ``matchAttribute`` constraint on the model: the general search, not the first-fit shortcut."""
    second: dict[str, Any] = {"name": "r1", "exactly": {"deviceClassName": "gpu", "count": count}}
    if model:
        second["exactly"]["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
    if sub:
        second = {"name": "r1", "firstAvailable": [{"name": "s0", **second["exactly"]},
                                                   {"name": "s1", "deviceClassName": "gpu", "count": 1}]}
    devices: dict[str, Any] = {"requests": [{"name": "r0", "exactly": {"deviceClassName": "gpu"}}, second]}
    if match:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    return {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": devices}}


gstep = st.tuples(st.integers(1, 2), st.sampled_from([None, "a", "b"]), st.booleans(), st.booleans(),
                  st.sampled_from(NODES), st.integers(0, 20))


@settings(max_examples=150, deadline=None)
@given(st.lists(pool, min_size=1, max_size=5), st.sampled_from(FEATURES), st.lists(gstep, min_size=1, max_size=8))
def test_search_memo_matches_plain_search(pools, features, steps):
    """The general search's outcome kept per (claims, node) while the node's pools' devices in use
    are the same, replayed for the next pod with equal claims, against a fresh search each time."""
    slices = slices_of(pools)
    nodes = {n: MakeNode().name(n).obj() for n in NODES}
    in_use: set[tuple[str, str, str]] = set()
    versions: dict[tuple[str, str], int] = {}

    def change(did: tuple[str, str, str], add: bool) -> None:
        (in_use.add if add else in_use.discard)(did)
        versions[did[:2]] = versions.get(did[:2], 0) + 1

    for count, model, match, sub, take, release in steps:
        claim = general_claim(count, model, match, sub)
        for _pod in range(2):  # a second pod with an equal claim replays the first one's searches
            memo = Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features, versions, {}, True)
            for name in NODES:
                plain = Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features)
                got, want = outcome(memo, nodes[name]), outcome(plain, nodes[name])
                assert got == want, name
                if _pod and name == take and isinstance(got, list):
                    for r in got[0]["devices"]["results"]:
                        change((r["driver"], r["pool"], r["device"]), True)
        if in_use and release < len(in_use):
            change(sorted(in_use)[release], False)



def check_row(memo: Allocator, plain: Allocator, node: Any, out: Any, rejected: bool, undecided: bool) -> Any:
    """One row of a batch of look-ups against the plain allocator: an undecided row asks
    ``allocate_run``, a rejected one has no solution, a decided one the plain results. Returns the outcome."""
    name = node.metadata.name
    want = outcome(plain, node)
    if undecided:
        assert name not in out
        got = outcome(memo, node)
    elif rejected:
        assert name not in out
        got = None
    else:
        got = out[name].results()
        assert out[name].request_names() == [[r["request"] for r in got[0]["devices"]["results"]]]
    assert got == want, name
    return got


def check_rows(pools: list[dict[str, Any]], features: Features, claims: list[tuple[dict[str, Any], str, int]]) -> None:
    """Filter's batch of look-ups (``Allocator.first_fit_rows``: one loop over the rows, nodes
    with a kept first fit or a kept general search decided there, the rest left to
    ``allocate_run``) against a plain allocator on every node, as the devices in use change."""
    slices = slices_of(pools)
    table = [MakeNode().name(n).obj() for n in NODES]
    in_use: set[tuple[str, str, str]] = set()
    versions: dict[tuple[str, str], int] = {}

    def change(did: tuple[str, str, str], add: bool) -> None:
        (in_use.add if add else in_use.discard)(did)
        versions[did[:2]] = versions.get(did[:2], 0) + 1

    for claim, take, release in claims:
        for _pod in range(2):  # the second pod finds the first one's scans and searches kept
            memo = Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features, versions, {}, True)
            rows = [2, 0, 1]
            taken = None
            out: dict[str, Any] = {}
            batch = memo.first_fit_rows(table, rows, out)
            rejected, undecided = batch if batch is not None else ([], list(range(len(rows))))
            assert not set(rejected) & set(undecided)
            for i, row in enumerate(rows):
                node = table[row]
                got = check_row(memo, Allocator([claim], in_use, {"gpu": CLASS}.get, slices, features), node, out,
                                i in rejected, i in undecided)
                if _pod and node.metadata.name == take and isinstance(got, list):
                    taken = got  # (Reserve, after Filter: the devices in use do not change during Filter)
            if _pod and taken is not None:
                for r in taken[0]["devices"]["results"]:
                    change((r["driver"], r["pool"], r["device"]), True)
        if in_use and release < len(in_use):
            change(sorted(in_use)[release], False)


@settings(max_examples=150, deadline=None)
@given(st.lists(pool, min_size=1, max_size=5), st.sampled_from(FEATURES), st.lists(step, min_size=1, max_size=8))
def test_first_fit_rows_matches_plain_scan(pools, features, steps):
    check_rows(pools, features, [(claim_of(count, model, tolerate), take, release)
                                 for count, model, tolerate, take, release in steps])


@settings(max_examples=150, deadline=None)
@given(st.lists(pool, min_size=1, max_size=5), st.sampled_from(FEATURES), st.lists(gstep, min_size=1, max_size=8))
def test_replayed_rows_match_plain_search(pools, features, steps):
    check_rows(pools, features, [(general_claim(count, model, match, sub), take, release)
                                 for count, model, match, sub, take, release in steps])
