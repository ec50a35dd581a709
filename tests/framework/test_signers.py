"""Pod signatures for opportunistic batching against upstream v1.37.2: staging
``kube-scheduler/framework/signers.go``, each plugin's ``SignPod`` and ``framework.go``
L833-927 (``computeBatchablePlugins``, ``SignPod``: Go's ``json.Marshal`` of the fragment map).

The expected JSON below is written from those Go sources (map keys sorted, struct fields in
declaration order, ``omitempty`` API fields dropped), not from this implementation."""

from __future__ import annotations

from typing import Any

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakePod

BATCHING_PTS = [{"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}]
"""scheduler_perf's batching config: no default spreading constraints."""


def _framework(plugin_config: list[dict[str, Any]] | None = BATCHING_PTS, features: FeatureGate | None = None,
               **profile: Any):  # noqa: ANN202
    prof: dict[str, Any] = {"schedulerName": "default-scheduler", **profile}
    if plugin_config is not None:
        prof["pluginConfig"] = plugin_config
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [prof]}
    store = ClusterStore()
    sched = Scheduler(decode_config(cfg, features=features), client=store, lister=store, features=features)
    return sched.profiles["default-scheduler"]


def _sample_pod() -> Any:
    return (MakePod().name("web").labels({"app": "web"}).scheduler_name("default-scheduler")
            .container("nginx", requests={"cpu": "500m", "memory": "1Gi"},
                       ports=[{"containerPort": 80, "hostPort": 8080}])
            .node_selector({"zone": "z1", "disk": "ssd"})
            .toleration(key="b", operator="Exists")
            .toleration(key="a", operator="Equal", value="x", effect="NoSchedule")
            .node_affinity_in("k", ["b", "a"])
            .spec(volumes=[{"name": "cache", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}])
            .obj())


def test_sample_pod_signature_is_upstreams_json() -> None:
    fw = _framework()
    assert fw.enable_signatures
    want = (
        '{"v1.Pod.Labels":{"app":"web"},'
        '"v1.Pod.Spec.Affinity.NodeAffinity":{"Required":["{\\"MatchExpressions\\":[\\"{\\\\\\"key\\\\\\":'
        '\\\\\\"k\\\\\\",\\\\\\"operator\\\\\\":\\\\\\"In\\\\\\",\\\\\\"values\\\\\\":[\\\\\\"a\\\\\\",'
        '\\\\\\"b\\\\\\"]}\\"],\\"MatchFields\\":[]}"],"Preferred":[]},'
        '"v1.Pod.Spec.Affinity.NodeSelector":{"disk":"ssd","zone":"z1"},'
        '"v1.Pod.Spec.CanonicalImageNames()":["nginx:latest"],'
        '"v1.Pod.Spec.ContainerRequestsAndOverheads()":{"MilliCPU":500,"Memory":1073741824,'
        '"EphemeralStorage":0,"AllowedPodNumber":0,"ScalarResources":null},'
        '"v1.Pod.Spec.HostPorts()":[8080],'
        '"v1.Pod.Spec.NodeName":"",'
        '"v1.Pod.Spec.RequiredFeatures()":"000000000",'
        '"v1.Pod.Spec.SchedulerName":"default-scheduler",'
        '"v1.Pod.Spec.Tolerations":[{"key":"a","operator":"Equal","value":"x","effect":"NoSchedule"},'
        '{"key":"b","operator":"Exists"}],'
        '"v1.Pod.Spec.Volumes.NonSyntheticSources()":["{\\"emptyDir\\":{}}"]}'
    )
    assert fw.sign_pod(_sample_pod()) == want.encode()


def test_signature_fragments_normalise_order() -> None:
    """Pods differing only in the order of tolerations, selector keys, affinity values, ports and
    images sign equally (the signers sort); a different request does not."""
    fw = _framework()
    a = (MakePod().name("a").container("img:1", requests={"cpu": "1"}, ports=[{"containerPort": 1, "hostPort": 2},
                                                                             {"containerPort": 1, "hostPort": 1}])
         .container("other").toleration(key="x", operator="Exists").toleration(key="y", operator="Exists")
         .node_affinity_in("k", ["1", "2"]).obj())
    b = (MakePod().name("b").container("other").container("img:1", requests={"cpu": "1"},
                                                          ports=[{"containerPort": 1, "hostPort": 1},
                                                                 {"containerPort": 1, "hostPort": 2}])
         .toleration(key="y", operator="Exists").toleration(key="x", operator="Exists")
         .node_affinity_in("k", ["2", "1"]).obj())
    c = MakePod().name("c").container("img:1", requests={"cpu": "2"}).obj()
    assert fw.sign_pod(a) is not None
    assert fw.sign_pod(a) == fw.sign_pod(b)
    assert fw.sign_pod(a) != fw.sign_pod(c)


def test_preferred_node_affinity_and_scalars() -> None:
    fw = _framework()
    pod = (MakePod().name("p").container("img", requests={"cpu": "1", "example.com/foo": "2"})
           .preferred_node_affinity(5, {"matchExpressions": [{"key": "z", "operator": "In", "values": ["b", "a"]}]})
           .obj())
    sig = fw.sign_pod(pod).decode()
    assert ('"v1.Pod.Spec.Affinity.NodeAffinity":{"Required":[],"Preferred":["{\\"Weight\\":5,\\"Preference\\":'
            '{\\"MatchExpressions\\":[\\"{\\\\\\"key\\\\\\":\\\\\\"z\\\\\\",\\\\\\"operator\\\\\\":\\\\\\"In\\\\\\",'
            '\\\\\\"values\\\\\\":[\\\\\\"a\\\\\\",\\\\\\"b\\\\\\"]}\\"],\\"MatchFields\\":[]}}"]}') in sig
    assert ('"v1.Pod.Spec.ContainerRequestsAndOverheads()":{"MilliCPU":1000,"Memory":0,"EphemeralStorage":0,'
            '"AllowedPodNumber":0,"ScalarResources":{"example.com/foo":2}}') in sig


def test_default_profile_never_signs() -> None:
    """PodTopologySpread's System defaulting has default constraints: every pod is refused
    ("pods with default topology constraints are not signable"), so the default profile never batches."""
    fw = _framework(plugin_config=None)
    assert fw.enable_signatures  # every plugin can sign …
    assert fw.sign_pod(_sample_pod()) is None  # … but PodTopologySpread refuses every pod
    pts = fw.plugins["PodTopologySpread"]
    _, st = pts.sign_pod(_sample_pod())
    assert st.message() == "pods with default topology constraints are not signable"


def test_plugin_refusals() -> None:
    fw = _framework()
    spread = MakePod().name("s").spread_constraint(1, "zone", "DoNotSchedule", {"app": "x"}).obj()
    affinity = MakePod().name("a").pod_affinity("podAffinity", {"topologyKey": "zone",
                                                             "labelSelector": {"matchLabels": {"a": "b"}}}).obj()
    claims = MakePod().name("c").spec(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}]).obj()
    for pod, plugin, msg in ((spread, "PodTopologySpread", "pods with topology constraints are not signable"),
                             (affinity, "InterPodAffinity", "pods with InterPodAffinity are not signable"),
                             (claims, "DynamicResources", "pods with dra resource claims are not signable")):
        assert fw.sign_pod(pod) is None
        _, st = fw.plugins[plugin].sign_pod(pod)
        assert st.message() == msg


def test_ignore_preferred_terms_drops_labels() -> None:
    fw = _framework(plugin_config=[*BATCHING_PTS, {"name": "InterPodAffinity",
                                                  "args": {"ignorePreferredTermsOfExistingPods": True}}])
    a = MakePod().name("a").label("app", "x").obj()
    b = MakePod().name("b").label("app", "y").obj()
    assert fw.sign_pod(a) == fw.sign_pod(b)
    assert b'"v1.Pod.Labels"' not in fw.sign_pod(a)
    fw2 = _framework()
    assert fw2.sign_pod(a) != fw2.sign_pod(b)


def test_unsignable_profiles() -> None:
    """An out-of-tree Filter plugin without SignPod disables signatures for the profile."""
    from kubesched.plugins.registry import in_tree_registry

    class NoSign:
        name = "NoSign"

        def filter(self, state, pod, node_info):  # noqa: ANN001, ANN201
            return None

    reg = in_tree_registry()
    reg["NoSign"] = lambda args, handle: NoSign()
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": BATCHING_PTS,
                         "plugins": {"filter": {"enabled": [{"name": "NoSign"}]}}}]}
    store = ClusterStore()
    fw = Scheduler(decode_config(cfg), client=store, lister=store, registry=reg).profiles["default-scheduler"]
    assert not fw.enable_signatures
    assert fw.sign_pod(_sample_pod()) is None


def test_off_at_134_and_configmap_secret_volumes_ignored() -> None:
    assert _framework(features=FeatureGate(emulated_version=(1, 34))).batch is None
    fw = _framework()
    plain = MakePod().name("p").obj()
    with_cm = MakePod().name("q").spec(volumes=[{"name": "a", "configMap": {"name": "x"}},
                                                {"name": "b", "secret": {"secretName": "s"}}]).obj()
    with_dir = MakePod().name("r").spec(volumes=[{"name": "a", "emptyDir": {}}]).obj()
    assert fw.sign_pod(plain) == fw.sign_pod(with_cm) != fw.sign_pod(with_dir)


def test_features_fragment_by_release() -> None:
    """1.35 signs the sorted list of required features; 1.36+ the bitmap's String(): one 0/1 per
    registered feature, in sorted order."""
    from kubesched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures

    pod = MakePod().name("p").obj()
    pl135 = NodeDeclaredFeatures(FeatureGate(emulated_version=(1, 35)))
    assert pl135.sign_pod(pod) == ([("v1.Pod.Spec.RequiredFeatures()", [])], None)
    pl137 = NodeDeclaredFeatures(FeatureGate(emulated_version=(1, 37)))
    assert pl137.sign_pod(pod) == ([("v1.Pod.Spec.RequiredFeatures()", "000000000")], None)


def test_dra_backed_extended_resources_refuse() -> None:
    """fit.go / balanced_allocation.go SignPod (1.36+): with DRAExtendedResource a pod is refused
    when a non-zero scalar request maps to a DeviceClass (``spec.extendedResourceName`` or the
    implicit ``deviceclass.resource.kubernetes.io/<class>``); 1.35 refused every pod then."""
    fw = _framework()
    fw.handle.lister.add_raw("DeviceClass", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                             "metadata": {"name": "gpu"},
                                             "spec": {"extendedResourceName": "example.com/gpu"}})
    msg = "signature disabled when dra extended resources are used in the cluster"
    for name in ("example.com/gpu", "deviceclass.resource.kubernetes.io/gpu"):
        pod = MakePod().name("p").req(cpu="1", **{name: "1"}).obj()
        assert fw.sign_pod(pod) is None
        for plugin in ("NodeResourcesFit", "NodeResourcesBalancedAllocation"):
            assert fw.plugins[plugin].sign_pod(pod)[1].message() == msg
    assert fw.sign_pod(MakePod().name("p").req(cpu="1", **{"example.com/other": "1"}).obj()) is not None
    fg135 = FeatureGate(emulated_version=(1, 35)).with_overrides(DRAExtendedResource=True)
    _, st = _framework(features=fg135).plugins["NodeResourcesFit"].sign_pod(MakePod().name("p").obj())
    assert st.message() == "signature disabled when dra extended resources enabled"
