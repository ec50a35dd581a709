"""deploy/: the manifests parse, agree with each other, are accepted by the box, and the RBAC grants
every API call kubesched's code makes.

The calls are derived from the code by running it: the production modules (informers for every
kind the runner may watch, the live ClusterClient's writes, leader
election, both event APIs, the endpoints' delegated auth) run against the box over real HTTP
through an APIClient that records each request; each request is resolved to
(verb, group, resource/subresource, name) as kube-apiserver's RequestInfo does and must be
allowed by a rule of a ClusterRole bound to the service account.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from livehelpers import node_obj, pod_obj

from kubesched.apiserver.launcher import start_server
from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.kube.adapter import PLUGIN_KINDS, WORKLOAD_KINDS, LiveClusterClient
from kubesched.kube.client import APIClient
from kubesched.kube.endpoints import EndpointsServer
from kubesched.kube.events import EventRecorder
from kubesched.kube.informer import RESOURCES, InformerFactory
from kubesched.kube.leaderelection import LeaderElector

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
#: the workload API served and watched (GenericWorkload, CompositePodGroup): podgroups too
WORKLOAD_ON = FeatureGate().with_overrides(GenericWorkload=True, TopologyAwareWorkloadScheduling=True,
                                          CompositePodGroup=True)


def docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d is not None]


def all_docs() -> list[dict[str, Any]]:
    return [d for f in sorted(DEPLOY.glob("*.yaml")) for d in docs(f.name)]


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in all_docs() if d["kind"] == kind]


# ───────────────────────────── static checks ─────────────────────────────


def test_every_manifest_parses_with_identity() -> None:
    assert {p.name for p in DEPLOY.glob("*.yaml")} == {"configmap.yaml", "deployment.yaml", "rbac.yaml",
                                                       "serviceaccount.yaml", "poddisruptionbudget.yaml",
                                                       "service.yaml"}
    for d in all_docs():
        assert d.get("apiVersion") and d.get("kind") and d["metadata"].get("name"), d


def test_configmap_holds_a_valid_configuration_for_a_second_scheduler() -> None:
    [cm] = by_kind("ConfigMap")
    cfg = decode_config(cm["data"]["config.yaml"], "deploy/configmap.yaml")
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]
    le = cfg.leader_election
    assert le is not None and le.leader_elect and le.resource_lock == "leases"
    assert (le.resource_namespace, le.resource_name) == ("kube-system", "kubesched")


def test_deployment_wiring() -> None:
    [dep] = by_kind("Deployment")
    [sa] = by_kind("ServiceAccount")
    [cm] = by_kind("ConfigMap")
    spec = dep["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == sa["metadata"]["name"]
    assert dep["metadata"]["namespace"] == sa["metadata"]["namespace"] == cm["metadata"]["namespace"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] != 0
    [c] = spec["containers"]
    assert "--config=/etc/kubesched/config.yaml" in c["args"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in spec["volumes"]}
    assert mounts["config"] == "/etc/kubesched" and vols["config"]["configMap"]["name"] == cm["metadata"]["name"]
    assert "config.yaml" in cm["data"]
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = c[probe]["httpGet"]
        assert (get["path"], get["port"], get["scheme"]) == (path, 10259, "HTTPS")
    assert c["securityContext"]["readOnlyRootFilesystem"] is True and "/tmp" in mounts.values()


def test_containerfile() -> None:
    text = (DEPLOY / "Containerfile").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    assert any(re.fullmatch(r"RUN pip install \. .*|RUN pip install \.", ln) for ln in lines)
    users = [ln for ln in lines if ln.startswith("USER ")]
    assert users and users[-1].split()[1].split(":")[0] not in ("0", "root")
    # the entry point of `make image` too: the Deployment's args start with the subcommand
    assert 'ENTRYPOINT ["kubesched"]' in lines
    [dep] = by_kind("Deployment")
    assert dep["spec"]["template"]["spec"]["containers"][0]["args"][0] == "run"


def test_rbac_is_well_formed_and_bound_to_the_service_account() -> None:
    roles = {r["metadata"]["name"]: r for r in by_kind("ClusterRole")}
    [sa] = by_kind("ServiceAccount")
    bound = set()
    subject = {"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": sa["metadata"]["namespace"]}
    for b in by_kind("ClusterRoleBinding"):
        # ours, and the built-in system:auth-delegator (delegated authn/authz of /metrics, /configz)
        assert b["roleRef"]["kind"] == "ClusterRole"
        assert b["roleRef"]["name"] in roles or b["roleRef"]["name"] == "system:auth-delegator"
        assert subject in b["subjects"]
        bound.add(b["roleRef"]["name"])
    assert bound == set(roles) | {"system:auth-delegator"}
    # and, as every delegating component, the reader of kube-system/extension-apiserver-authentication
    [rb] = by_kind("RoleBinding")
    assert rb["metadata"]["namespace"] == "kube-system" and subject in rb["subjects"]
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                             "name": "extension-apiserver-authentication-reader"}
    for r in roles.values():
        for rule in r["rules"]:
            assert set(rule) <= {"apiGroups", "resources", "verbs", "resourceNames"}
            assert rule["apiGroups"] and rule["resources"] and rule["verbs"]
            assert set(rule["verbs"]) <= {"get", "list", "watch", "create", "update", "patch", "delete",
                                          "deletecollection"}
    # the lease the ConfigMap names is one the role lets us renew
    assert allowed(("update", "coordination.k8s.io", "leases", "kubesched"))


# ───────────────────────────── RBAC coverage ─────────────────────────────


def rules() -> list[dict[str, Any]]:
    return [rule for r in by_kind("ClusterRole") for rule in r["rules"]]


def allowed(call: tuple[str, str, str, str]) -> bool:
    verb, group, resource, name = call
    for rule in rules():
        if group not in rule["apiGroups"] and "*" not in rule["apiGroups"]:
            continue
        if resource not in rule["resources"] and "*" not in rule["resources"]:
            continue
        if verb not in rule["verbs"] and "*" not in rule["verbs"]:
            continue
        names = rule.get("resourceNames") or []
        if names and name not in names:
            continue
        return True
    return False


DISCOVERY = re.compile(r"^/(api|api/v1|apis|apis/[^/]+/[^/]+)/?$")


def request_info(method: str, path: str, params: Mapping[str, Any] | None) -> tuple[str, str, str, str] | None:
    """kube-apiserver's RequestInfo (staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go),
    reduced to (verb, group, resource[/subresource], name); None for discovery (non-resource)."""
    if DISCOVERY.match(path):
        return None
    parts = [p for p in path.split("/") if p]
    if parts[0] == "api":
        group, rest = "", parts[2:]
    elif parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        raise AssertionError(f"unexpected path {path}")
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    watch = str((params or {}).get("watch", "")).lower() in ("true", "1")
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method)
    if verb is None:
        if method == "GET":
            verb = "watch" if watch else ("get" if name else "list")
        elif method == "DELETE":
            verb = "delete" if name else "deletecollection"
        else:
            raise AssertionError(method)
    return verb, group, resource, name


class RecordingClient(APIClient):
    """An APIClient that notes every request it sends (the requests still go over HTTP)."""

    calls: list[tuple[str, str, dict[str, Any]]]

    async def request_raw(self, method: str, path: str, params: Mapping[str, Any] | None = None,
                          body: Any = None, content_type: str | None = None) -> tuple[int, bytes]:
        self.calls.append((method, path, dict(params or {})))
        return await super().request_raw(method, path, params, body, content_type)

    async def stream_watch_raw(self, path: str, params: Mapping[str, Any] | None = None, *,
                               deadline_s: float | None = None) -> AsyncGenerator[bytes, None]:
        self.calls.append(("GET", path, {**(params or {}), "watch": "true"}))
        async for line in super().stream_watch_raw(path, params, deadline_s=deadline_s):
            yield line


def watched_kinds() -> list[str]:
    """What the runner may watch: Pods, Nodes, the workload kinds (adapter.WORKLOAD_KINDS, with
    their gates) and the kinds of every plugin (adapter.PLUGIN_KINDS)."""
    kinds = ["Pod", "Node", *WORKLOAD_KINDS]
    for ks in PLUGIN_KINDS.values():
        kinds += [k for k in ks if k not in kinds]
    assert set(kinds) <= set(RESOURCES)
    return kinds


def recording_client(url: str) -> RecordingClient:
    c = RecordingClient.for_server(url, timeout=10)
    assert isinstance(c, RecordingClient)
    c.calls = []
    return c


async def exercise(url: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Run each production module that talks to the API server once through its API calls."""
    c = recording_client(url)
    try:
        plain = APIClient.for_server(url)
        await plain.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        await plain.create("/api/v1/nodes", node_obj("n1"))
        pod = await plain.create("/api/v1/namespaces/ns/pods", pod_obj("p", ns="ns"))
        victim = await plain.create("/api/v1/namespaces/ns/pods", pod_obj("v", ns="ns"))
        pv = await plain.create("/api/v1/persistentvolumes", {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}}})
        pvc = await plain.create("/api/v1/namespaces/ns/persistentvolumeclaims", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c1", "namespace": "ns"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
        claim = await plain.create("/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "rc", "namespace": "ns"},
            "spec": {"devices": {"requests": []}}})
        pod_group = await plain.create("/apis/scheduling.k8s.io/v1beta1/namespaces/ns/podgroups", {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "ns"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
        await plain.close()

        # informers: Pods, Nodes and every kind a plugin makes the runner watch
        factory = InformerFactory(c)
        factory.informers_for(watched_kinds())
        await factory.probe_served()
        factory.start()
        assert await factory.wait_for_cache_sync(20)
        await factory.stop()

        # the engine's writes
        from kubesched.api.objects import Pod, decode

        recorder = EventRecorder(c, "kubesched")
        rec_task = asyncio.create_task(recorder.run())
        live = LiveClusterClient(c, recorder, features=WORKLOAD_ON)
        p, v = decode(Pod, pod), decode(Pod, victim)
        await live.bind(p, "n1")
        live.update_pod_condition(v, "False", "Unschedulable", "0/1 nodes are available", "n1")
        live.clear_nominated_node_name(v)
        live.add_pod_condition(v, {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"})
        live.delete_pod(v)
        for obj, fn in ((pv, live.update_persistent_volume), (pvc, live.update_persistent_volume_claim),
                        (claim, live.update_resource_claim_status)):
            try:
                await fn(obj)
            except Exception as err:  # noqa: BLE001 - the call was made; its outcome is not the point here
                print("write:", err)
        # the pod-group cycle's status condition (PodGroupInitiallyScheduled)
        live.patch_pod_group_condition(pod_group, {"type": "PodGroupInitiallyScheduled", "status": "False",
                                                   "reason": "Unschedulable", "message": "0/1 nodes are available"})
        await live.writer.flush(10)
        live.record_event(p, "Normal", "Scheduled", "Binding", "Successfully assigned ns/p to n1")
        for _ in range(2):  # the second one is a series PATCH
            live.record_event(v, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available")
        await recorder.stop(10)
        rec_task.cancel()
        legacy = EventRecorder(c, "kubesched", api="v1")  # the core/v1 fallback, and leader-election events
        legacy_task = asyncio.create_task(legacy.run())
        for _ in range(2):
            legacy.emit(p, None, "Warning", "FailedScheduling", "Scheduling", "x")
        await legacy.stop(10)
        legacy_task.cancel()

        # leader election: create, renew, release, on the lease named in the ConfigMap
        el = LeaderElector(c, "kube-system", "kubesched", "me", 2, 1.5, 0.25)
        renewed = asyncio.Event()

        async def lead() -> None:
            await asyncio.sleep(0.6)  # a couple of renewals
            renewed.set()
            await asyncio.Event().wait()

        task = asyncio.create_task(el.run(lead, lambda: None))
        await asyncio.wait_for(renewed.wait(), 10)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

        # delegated authentication / authorization of /metrics
        srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, delegate=c)
        await srv._authenticate("some-token")
        await srv._authorize("someone", [], "/metrics", "get")
        return c.calls
    finally:
        await c.close()


@pytest.mark.asyncio
async def test_rbac_covers_every_call_the_code_makes() -> None:
    async with start_server(token=None, features=WORKLOAD_ON) as box:
        calls = await exercise(box.url)
    seen = set()
    missing = []
    for method, path, params in calls:
        info = request_info(method, path, params)
        if info is None:
            continue  # discovery: system:discovery, bound to every authenticated user by default
        seen.add(info[:3])
        if not allowed(info):
            missing.append(info)
    assert not missing, f"calls the RBAC does not allow: {sorted(set(missing))}"
    # the exercise really reached the code paths it claims to
    for expected in [("create", "", "pods/binding"), ("patch", "", "pods/status"), ("delete", "", "pods"),
                     ("watch", "", "pods"), ("list", "", "nodes"), ("create", "events.k8s.io", "events"),
                     ("patch", "events.k8s.io", "events"), ("create", "", "events"), ("patch", "", "events"),
                     ("update", "coordination.k8s.io", "leases"), ("create", "coordination.k8s.io", "leases"),
                     ("create", "authentication.k8s.io", "tokenreviews"),
                     ("create", "authorization.k8s.io", "subjectaccessreviews"),
                     ("list", "scheduling.k8s.io", "podgroups"), ("watch", "scheduling.k8s.io", "podgroups"),
                     ("watch", "scheduling.k8s.io", "compositepodgroups"),
                     ("patch", "scheduling.k8s.io", "podgroups/status")]:
        assert expected in seen, expected
    print(sorted(seen))


# ───────────────────────────── accepted by the box ─────────────────────────────


@pytest.mark.asyncio
async def test_the_box_accepts_the_manifests_it_serves() -> None:
    paths = {"ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
             "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
             "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
             "Service": "/api/v1/namespaces/{ns}/services",
             "PodDisruptionBudget": "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
             "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
             "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
             "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"}
    async with start_server(token=None) as box, APIClient.for_server(box.url) as c:
        served = {r["name"] for r in (await c.get("/apis/apps/v1"))["resources"]}
        assert "deployments" in served
        for d in all_docs():
            tmpl = paths[d["kind"]]
            created = await c.create(tmpl.format(ns=d["metadata"].get("namespace", "")), d)
            assert created["metadata"]["name"] == d["metadata"]["name"]


@pytest.mark.asyncio
@pytest.mark.parametrize("gates", [None, WORKLOAD_ON], ids=["defaults", "workload-api"])
async def test_rbac_covers_the_real_runner_with_the_deployed_configuration(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path,
                                                                            gates: FeatureGate | None) -> None:
    """``kubesched run`` in-process with the ConfigMap's configuration (only the kubeconfig points at
    the box instead of the in-cluster service account, and the lease times are short): every
    request of every client it builds (main, events, leader election) is recorded. With the
    workload gates on, it also watches PodGroups and CompositePodGroups."""
    from livehelpers import eventually

    import kubesched.kube.client as client_mod
    from kubesched.kube.runner import Runner, RunOptions

    calls: list[tuple[str, str, dict[str, Any]]] = []

    class Rec(RecordingClient):
        pass

    Rec.calls = calls
    monkeypatch.setattr(client_mod, "APIClient", Rec)
    [cm] = by_kind("ConfigMap")
    cfg = decode_config(cm["data"]["config.yaml"], "deploy/configmap.yaml")
    kc = tmp_path / "kc"
    async with start_server(kc, token=None, features=gates or FeatureGate()):
        assert cfg.client_connection is not None
        cfg.client_connection.kubeconfig = str(kc)
        url = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
        async with APIClient.for_server(url) as api:
            await api.create("/api/v1/nodes", node_obj("n1", cpu="2"))
            for n in ("a", "b"):
                await api.create("/api/v1/namespaces/default/pods", pod_obj(n, scheduler="kubesched"))
            await api.create("/api/v1/namespaces/default/pods", pod_obj("huge", cpu="64", scheduler="kubesched"))
            runner = Runner(RunOptions(config=cfg, config_file="deploy/configmap.yaml", lease_duration="2s",
                                       renew_deadline="1500ms", retry_period="500ms", secure_port=0,
                                       bind_address="127.0.0.1", features=gates))
            task = asyncio.create_task(runner.run())

            async def scheduled() -> bool:
                pods = {p["metadata"]["name"]: p for p in
                        (await api.list("/api/v1/namespaces/default/pods"))["items"]}
                return (all(pods[n]["spec"].get("nodeName") for n in ("a", "b"))
                        and bool(pods["huge"]["status"].get("conditions")))

            await eventually(scheduled, timeout=60, what="pods bound and the unschedulable one reported")
            # a lease renewal (PUT) and an event write went out (waited for, not slept for)
            await eventually(lambda: any(m == "PUT" and "/leases/" in p for m, p, _ in calls)
                             and any(m == "POST" and p.startswith("/apis/events.k8s.io/") for m, p, _ in calls),
                             timeout=60, what="a lease renewal and an event write")
            runner.request_stop()
            assert await asyncio.wait_for(task, 30) == 0
            lease = await api.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched")
            assert lease["spec"].get("holderIdentity", "") == ""  # released
    missing = sorted({info for m, p, q in calls if (info := request_info(m, p, q)) is not None
                      and not allowed(info)})
    assert not missing, f"calls the RBAC does not allow: {missing}"
    seen = {info[:3] for m, p, q in calls if (info := request_info(m, p, q)) is not None}
    for expected in [("create", "", "pods/binding"), ("patch", "", "pods/status"), ("watch", "", "pods"),
                     ("get", "coordination.k8s.io", "leases"), ("update", "coordination.k8s.io", "leases"),
                     ("create", "events.k8s.io", "events"),
                     *([("watch", "scheduling.k8s.io", "podgroups"),
                        ("watch", "scheduling.k8s.io", "compositepodgroups")] if gates is not None else [])]:
        assert expected in seen, (expected, sorted(seen))
