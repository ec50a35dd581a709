"""InterPodAffinityHostnameFastPath (α 1.37, off by default): hostname-scoped required terms
checked against the candidate node's own pods (v1.37.2 interpodaffinity/filtering.go L47-90,
L630-880).

Upstream calls it "same results, fewer counters"; that holds when every node carries its own
``kubernetes.io/hostname`` value (kubelet's default). Two observable differences remain, both
reproduced here: nodes sharing a hostname value no longer see each other's pods, and a pod matching
hostname-only affinity terms on a node *without* the label still blocks the self-affinity
fallback (``matchingHostScopedAffinityPodsCount`` counts every node). Tests: upstream's
documented cases, kubesched (gate on) against a plain per-node port of the fast path on random
clusters (with shared and missing hostname labels, AddPod/RemovePod included), and gate on ==
gate off when every node has a unique hostname.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_interpodaffinity import (
    AFF,
    ANTI,
    NS_OBJS,
    NSS,
    R_AFF,
    R_ANTI,
    R_EXIST,
    UU,
    U,
    _eval_state,
    _Lister,
    labels_st,
    node,
    pod,
    run_filter,
    term,
    terms_st,
)

from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import interpodaffinity as ipa
from kubesched.plugins.interpodaffinity.terms import merge_namespaces, parse_pod_terms, target_matches
from kubesched.testing.wrappers import build_table

HOST = "kubernetes.io/hostname"
ON = FeatureGate(overrides={"InterPodAffinityHostnameFastPath": True})
OFF = FeatureGate()


def hnode(name: str, host: str | None, **labels: str):  # noqa: ANN201
    """A node whose hostname label is ``host`` (absent for None; MakeNode sets it to the name)."""
    n = node(name, **labels)
    if host is None:
        n.metadata.labels.pop(HOST, None)
    else:
        n.metadata.labels[HOST] = host
    return n


def plugin(table, features):  # noqa: ANN001, ANN201
    return ipa.new(None, Handle(nodes=table, lister=_Lister(NS_OBJS), features=features))


# ───────────────────────────── a plain port of the fast path ─────────────────────────────

def fast_reference(table, incoming):  # noqa: ANN001, ANN201
    """Upstream PreFilter + Filter with the gate on, walking pods node by node: per node name
    None or (code, reason)."""
    terms = parse_pod_terms(incoming)
    ns_list = lambda: NS_OBJS  # noqa: E731
    aff = [(merge_namespaces(t, ns_list, True), t.topology_key) for t in terms.required_affinity]
    anti = [(merge_namespaces(t, ns_list, True), t.topology_key) for t in terms.required_anti_affinity]
    host_only = bool(aff) and all(tk == HOST for _, tk in aff)
    ns, labels = incoming.metadata.namespace, incoming.metadata.labels
    ns_labels = next((n.metadata.labels for n in NS_OBJS if n.metadata.name == ns), {})
    rows = table.order().tolist()
    on_node = {r: [pi.pod for pi in table.pods[r]] for r in rows}
    node_labels = {r: table.nodes[r].metadata.labels for r in rows}

    def all_aff(p) -> bool:  # noqa: ANN001
        return bool(aff) and all(target_matches(tg, p.metadata.namespace, p.metadata.labels) for tg, _ in aff)

    existing_cw: dict = {}
    aff_cw: dict = {}
    anti_cw: dict = {}
    host_total = 0
    for r in rows:
        nl = node_labels[r]
        for p in on_node[r]:
            for t in parse_pod_terms(p).required_anti_affinity:
                if t.topology_key != HOST and t.matches(ns, labels, ns_labels) and t.topology_key in nl:
                    k = (t.topology_key, nl[t.topology_key])
                    existing_cw[k] = existing_cw.get(k, 0) + 1
            if not host_only and all_aff(p):
                for _, tk in aff:
                    if tk in nl:
                        aff_cw[(tk, nl[tk])] = aff_cw.get((tk, nl[tk]), 0) + 1
            if host_only and all_aff(p):
                host_total += 1
            for tg, tk in anti:
                if tk != HOST and tk in nl and target_matches(tg, p.metadata.namespace, p.metadata.labels):
                    anti_cw[(tk, nl[tk])] = anti_cw.get((tk, nl[tk]), 0) + 1
    self_match = all_aff(incoming)
    out = {}
    for r in rows:
        nl = node_labels[r]
        res = None
        if host_only:  # nodePodsSatisfyAffinity
            ok = HOST in nl and (any(all_aff(p) for p in on_node[r]) or (host_total <= 0 and self_match))
            if not ok:
                res = (UU, R_AFF)
        elif aff:  # nodeTopologyMatchesAffinity
            exist, missing = True, False
            for _, tk in aff:
                if tk not in nl:
                    missing = True
                elif aff_cw.get((tk, nl[tk]), 0) <= 0:
                    exist = False
            if missing or (not exist and not (not aff_cw and self_match)):
                res = (UU, R_AFF)
        if res is None:
            conflict = any(tk != HOST and tk in nl and anti_cw.get((tk, nl[tk]), 0) > 0 for _, tk in anti)
            host_anti = [tg for tg, tk in anti if tk == HOST]
            if host_anti and HOST in nl:
                conflict = conflict or any(target_matches(tg, p.metadata.namespace, p.metadata.labels)
                                           for p in on_node[r] for tg in host_anti)
            if conflict:
                res = (U, R_ANTI)
        if res is None:
            bad = any(existing_cw.get((k, v), 0) > 0 for k, v in nl.items())
            if not bad and HOST in nl:
                bad = any(t.topology_key == HOST and t.matches(ns, labels, ns_labels)
                          for p in on_node[r] for t in parse_pod_terms(p).required_anti_affinity)
            if bad:
                res = (U, R_EXIST)
        out[table.names[r]] = res
    return out


# ───────────────────────────── upstream's documented differences ─────────────────────────────

def test_shared_hostname_value_is_node_local_with_the_gate() -> None:
    # n0 and n1 both labelled hostname=h; an app=db pod runs on n0; the incoming pod has a
    # hostname-scoped anti-affinity to app=db: gate off rejects both nodes (same topology pair),
    # gate on only n0 (nodePodsConflictWithAntiAffinity looks at n0's own pods)
    nodes = [hnode("n0", "h"), hnode("n1", "h")]
    pods = [pod("db", {"app": "db"}, "n0")]
    incoming = pod("in", terms=[(ANTI, term(HOST, match={"app": "db"}), None)])
    for fg, want in ((OFF, {"n0": (U, R_ANTI), "n1": (U, R_ANTI)}), (ON, {"n0": (U, R_ANTI), "n1": None})):
        table = build_table(nodes, pods)
        assert run_filter(table, plugin(table, fg), incoming) == want
        assert fast_reference(table, incoming) == want or fg is OFF


def test_matching_pod_on_unlabelled_node_blocks_self_affinity_with_the_gate() -> None:
    # an app=web pod runs on n1, which has no hostname label; the incoming app=web pod has a
    # hostname-scoped affinity to app=web: gate off counts no topology pair (self-affinity lets
    # it onto n0), gate on counts the pod (matchingHostScopedAffinityPodsCount = 1) and rejects
    nodes = [hnode("n0", "n0"), hnode("n1", None)]
    pods = [pod("web", {"app": "web"}, "n1")]
    incoming = pod("in", {"app": "web"}, terms=[(AFF, term(HOST, match={"app": "web"}), None)])
    for fg, want in ((OFF, {"n0": None, "n1": (UU, R_AFF)}), (ON, {"n0": (UU, R_AFF), "n1": (UU, R_AFF)})):
        table = build_table(nodes, pods)
        assert run_filter(table, plugin(table, fg), incoming) == want


def test_existing_pod_hostname_anti_affinity_is_node_local() -> None:
    nodes = [hnode("n0", "h"), hnode("n1", "h"), hnode("n2", None)]
    pods = [pod("guard", {"x": "y"}, "n0", terms=[(ANTI, term(HOST, match={"app": "web"}), None)])]
    incoming = pod("in", {"app": "web"})
    table = build_table(nodes, pods)
    assert run_filter(table, plugin(table, ON), incoming) == {"n0": (U, R_EXIST), "n1": None, "n2": None}
    table = build_table(nodes, pods)
    assert run_filter(table, plugin(table, OFF), incoming) == {"n0": (U, R_EXIST), "n1": (U, R_EXIST), "n2": None}


# ───────────────────────────── properties ─────────────────────────────

@st.composite
def host_cluster_st(draw, unique: bool = False):  # noqa: ANN001, ANN201
    n = draw(st.integers(1, 6))
    nodes = []
    for i in range(n):
        lab = {}
        if draw(st.booleans()):
            lab["zone"] = draw(st.sampled_from(["z1", "z2"]))
        h = f"n{i}" if unique else draw(st.sampled_from([f"n{i}", "shared", None]))
        nodes.append(hnode(f"n{i}", h, **lab))
    pods = [pod(f"e{j}", draw(labels_st), f"n{draw(st.integers(0, n - 1))}", draw(st.sampled_from(NSS)),
                draw(terms_st()) if draw(st.booleans()) else None)
            for j in range(draw(st.integers(0, 8)))]
    incoming = pod("incoming", draw(labels_st), None, draw(st.sampled_from(NSS)), draw(terms_st()))
    extra = pod("extra", draw(labels_st), f"n{draw(st.integers(0, n - 1))}", draw(st.sampled_from(NSS)),
                draw(terms_st()) if draw(st.booleans()) else None)
    return nodes, pods, incoming, extra


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(host_cluster_st())
def test_gate_on_equals_fast_path_reference(cluster) -> None:  # noqa: ANN001
    nodes, pods, incoming, extra = cluster
    table = build_table(nodes, [])
    pl = plugin(table, ON)
    for p in pods:  # built incrementally: exercises the index
        table.add_pod(PodInfo(p), table.row_of[p.spec.node_name])
    assert run_filter(table, pl, incoming) == fast_reference(table, incoming)
    # AddPod / RemovePod (preemption's what-if) == the reference on the changed cluster
    state = CycleState(PodInfo(incoming))
    _, st_ = pl.pre_filter(state, incoming, table)
    if st_ is None:
        row = table.row_of[extra.spec.node_name]
        cloned = state.clone()
        assert pl.add_pod(cloned, incoming, PodInfo(extra), table.node_info(row)) is None
        table.add_pod(PodInfo(extra), row)
        assert _eval_state(pl, table, cloned, incoming) == fast_reference(table, incoming)
        table.remove_pod(PodInfo(extra), row)
        assert pl.remove_pod(cloned, incoming, PodInfo(extra), table.node_info(row)) is None
        assert _eval_state(pl, table, cloned, incoming) == fast_reference(table, incoming)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(host_cluster_st(unique=True))
def test_same_results_when_hostnames_are_unique_and_present(cluster) -> None:  # noqa: ANN001
    """Upstream's "same results, fewer counters" where kubelet's labelling holds (every node has
    its own hostname value), except the self-affinity corner (no pod on an unlabelled node can
    exist here, so none)."""
    nodes, pods, incoming, _ = cluster
    got = {}
    for fg in (OFF, ON):
        table = build_table(nodes, pods)
        got[fg is ON] = run_filter(table, plugin(table, fg), incoming)
    assert got[True] == got[False]
