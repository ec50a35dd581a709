"""Scheduler extenders over real HTTP (an aiohttp extender server on 127.0.0.1:0, its own thread),
driven by the engine as ``simulate`` drives it: the wire format (Go field names,
``nodeCacheCapable``), filter results merged into the FailedScheduling message, prioritize
weights, bind, preempt, faults (500, timeouts, connection refused), ``ignorable``,
``managedResources`` / ``ignoredByScheduler``, TLS."""

from __future__ import annotations

import base64
import socket
import threading
from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.kube.endpoints import self_signed_cert
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.extender_server import ExtenderServer
from kubesched.testing.wrappers import MakeNode, MakePod


def _scheduler(extenders: list[dict[str, Any]], nodes: tuple[str, ...] = ("node-a", "node-b", "node-c"),
               record: bool = False, **node_caps: Any) -> tuple[Scheduler, ClusterStore]:
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "extenders": extenders})
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, seed=1, record=record)
    store.scheduler = sched
    for n in nodes:
        store.add("Node", MakeNode().name(n).capacity(cpu="4", memory="8Gi", pods="110", **node_caps).obj())
    return sched, store


def _pod(name: str = "p", **req: Any) -> Any:
    return MakePod().name(name).namespace("default").uid(f"uid-{name}").req(cpu="100m", **req).obj()


def _run(sched: Scheduler, store: ClusterStore) -> Any:
    attempt = sched.schedule_one()
    store.flush()
    return attempt


@pytest.fixture
def server():
    with ExtenderServer() as srv:
        yield srv


def test_filter_sends_full_nodes_and_merges_failures_into_the_message(server: ExtenderServer) -> None:
    server.filter_fn = lambda pod, names: (set(), {"node-a": "no GPU left"},
                                           {"node-b": "wrong rack", "node-c": "wrong rack"})
    sched, store = _scheduler([{"urlPrefix": server.url + "/", "filterVerb": "filter"}], record=True)
    store.add("Pod", _pod())
    attempt = _run(sched, store)
    assert attempt.result == "unschedulable"
    assert attempt.record.filter["node-a"]["Extender"] == ["no GPU left"]
    assert attempt.record.filter["node-b"]["Extender"] == ["wrong rack"]
    assert attempt.record.feasible_nodes == 0
    # then PostFilter's message: preemption helps only where the extender said Unschedulable
    assert attempt.message.startswith("0/3 nodes are available: 1 no GPU left, 2 wrong rack. ")
    assert attempt.message.endswith("preemption: 0/3 nodes are available: 1 No preemption victims found for "
                                    "incoming pod, 2 Preemption is not helpful for scheduling.")
    body = server.calls("filter")[0]
    assert body["NodeNames"] is None
    assert [i["metadata"]["name"] for i in body["Nodes"]["items"]] == ["node-a", "node-b", "node-c"]
    assert body["Pod"]["metadata"]["name"] == "p"
    pod = store.get("Pod", "default", "p")
    cond = [c for c in pod.status.conditions if c.type == "PodScheduled"][0]
    assert cond.reason == "Unschedulable" and cond.message == attempt.message


def test_node_cache_capable_sends_names_only(server: ExtenderServer) -> None:
    server.filter_fn = lambda pod, names: ({"node-c"}, {"node-a": "x", "node-b": "x"}, {})
    sched, store = _scheduler([{"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True}])
    store.add("Pod", _pod())
    attempt = _run(sched, store)
    assert attempt.result == "scheduled" and attempt.node == "node-c"
    body = server.calls("filter")[0]
    assert body["Nodes"] is None and body["NodeNames"] == ["node-a", "node-b", "node-c"]
    assert store.get("Pod", "default", "p").spec.node_name == "node-c"


def test_prioritize_weight_decides(server: ExtenderServer) -> None:
    server.prioritize_fn = lambda pod, names: {"node-b": 10}
    sched, store = _scheduler([{"urlPrefix": server.url, "prioritizeVerb": "prioritize", "weight": 5}],
                              record=True)
    for i in range(3):
        store.add("Pod", _pod(f"p{i}"))
        attempt = _run(sched, store)
        assert attempt.node == "node-b"  # 10 × 5 × 10 = 500 outweighs the plugins' scores
        assert attempt.record.score["node-b"][server.url] == 10
        assert attempt.record.final_score["node-b"][server.url] == 500
    assert len(server.calls("prioritize")) == 3


def test_filter_failure_is_an_error_then_the_pod_schedules(server: ExtenderServer) -> None:
    """A 500 fails the attempt with upstream's text; the pod is requeued (not lost) and is
    scheduled once, on the next attempt, after the fault is gone."""
    server.faults["filter"] = 500
    sched, store = _scheduler([{"urlPrefix": server.url, "filterVerb": "filter"}])
    store.add("Pod", _pod())
    attempt = _run(sched, store)
    assert attempt.result == "error"
    assert attempt.message == f"failed filter with extender at URL {server.url}/filter, code 500"
    cond = [c for c in store.get("Pod", "default", "p").status.conditions if c.type == "PodScheduled"][0]
    assert cond.reason == "SchedulerError"
    del server.faults["filter"]
    sched.clock.advance(10)  # past the backoff
    sched.queue.flush_backoff_completed()
    attempts = []
    while sched.queue.has_schedulable():
        attempts.append(_run(sched, store))
    assert [a.result for a in attempts] == ["scheduled"]
    assert sched.stats.bound == 1


def test_timeout_fails_unless_ignorable(server: ExtenderServer) -> None:
    server.delays["filter"] = 2.0
    sched, store = _scheduler([{"urlPrefix": server.url, "filterVerb": "filter", "httpTimeout": "200ms"}])
    store.add("Pod", _pod())
    attempt = _run(sched, store)
    assert attempt.result == "error"
    assert attempt.message == (f'Post "{server.url}/filter": context deadline exceeded '
                               "(Client.Timeout exceeded while awaiting headers)")
    sched, store = _scheduler([{"urlPrefix": server.url, "filterVerb": "filter", "httpTimeout": "200ms",
                                "ignorable": True}])
    store.add("Pod", _pod())
    assert _run(sched, store).result == "scheduled"


def test_connection_refused_and_prioritize_errors_are_ignored() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    sched, store = _scheduler([{"urlPrefix": f"http://127.0.0.1:{port}", "prioritizeVerb": "prioritize",
                                "weight": 1}])
    store.add("Pod", _pod())
    assert _run(sched, store).result == "scheduled"  # upstream: a prioritize error adds no score
    sched, store = _scheduler([{"urlPrefix": f"http://127.0.0.1:{port}", "filterVerb": "filter"}])
    store.add("Pod", _pod())
    attempt = _run(sched, store)
    assert attempt.result == "error" and attempt.message.startswith(f'Post "http://127.0.0.1:{port}/filter": ')


def test_bind_verb_binds_instead_of_the_default_binder(server: ExtenderServer) -> None:
    sched, store = _scheduler([{"urlPrefix": server.url, "bindVerb": "bind"}], nodes=("node-a",))
    store.add("Pod", _pod())
    attempt = _run(sched, store)
    assert attempt.result == "scheduled"
    assert server.bound == [("default", "p", "node-a")]
    assert server.calls("bind")[0] == {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p",
                                       "Node": "node-a"}
    # offline, the store stands for the API server the extender wrote the binding to
    assert store.get("Pod", "default", "p").spec.node_name == "node-a"
    server.bind_error = "no capacity"
    store.add("Pod", _pod("q"))
    attempt = _run(sched, store)
    assert attempt.result == "error" and attempt.message == "no capacity"
    assert not sched.cache.is_assumed("default/q")


def test_managed_resources_interest_and_ignored_by_scheduler(server: ExtenderServer) -> None:
    """Only pods using a managed resource reach the extender; ``ignoredByScheduler`` resources are
    left out of NodeResourcesFit (no node advertises ``example.com/fpga``)."""
    server.filter_fn = lambda pod, names: ({"node-b"}, {"node-a": "busy", "node-c": "busy"}, {})
    sched, store = _scheduler([{"urlPrefix": server.url, "filterVerb": "filter",
                                "managedResources": [{"name": "example.com/fpga", "ignoredByScheduler": True}]}])
    store.add("Pod", _pod("plain"))
    assert _run(sched, store).result == "scheduled"
    assert server.calls("filter") == []
    store.add("Pod", _pod("fpga", **{"example.com/fpga": "1"}))
    attempt = _run(sched, store)
    assert attempt.result == "scheduled" and attempt.node == "node-b"
    assert len(server.calls("filter")) == 1


@pytest.mark.parametrize("cache_capable", [True, False])
def test_preempt_verb_narrows_candidates(server: ExtenderServer, cache_capable: bool) -> None:
    """Preemption asks the extender (NodeNameToMetaVictims with nodeCacheCapable); it keeps only
    node-b, so the preemptor is nominated there and node-b's victim is evicted."""
    seen: list[dict[str, Any]] = []

    def preempt(pod: dict[str, Any], victims: dict[str, Any]) -> dict[str, Any]:
        seen.append(victims)
        return {"node-b": victims["node-b"]}

    server.preempt_fn = preempt
    sched, store = _scheduler([{"urlPrefix": server.url, "preemptVerb": "preempt",
                                "nodeCacheCapable": cache_capable}], nodes=("node-a", "node-b"))
    for n in ("node-a", "node-b"):
        store.add("Pod", MakePod().name(f"low-{n}").namespace("default").uid(f"low-{n}").priority(0)
                  .req(cpu="4").node(n).obj())
    store.add("Pod", MakePod().name("high").namespace("default").uid("high").priority(100).req(cpu="4").obj())
    attempt = _run(sched, store)
    assert attempt.result == "unschedulable"
    assert set(seen[0]) == {"node-a", "node-b"}
    assert seen[0]["node-a"] == {"Pods": [{"UID": "low-node-a"}], "NumPDBViolations": 0}
    body = server.calls("preempt")[0]
    if cache_capable:  # names and UIDs only
        assert body["NodeNameToVictims"] is None and "node-a" in body["NodeNameToMetaVictims"]
    else:  # whole pods
        assert body["NodeNameToMetaVictims"] is None
        assert body["NodeNameToVictims"]["node-a"]["Pods"][0]["metadata"]["name"] == "low-node-a"
    assert store.get("Pod", "default", "high").status.nominated_node_name == "node-b"
    assert store.get("Pod", "default", "low-node-b") is None
    assert store.get("Pod", "default", "low-node-a") is not None


def test_tls_with_ca_data_and_insecure() -> None:
    cert, key = self_signed_cert("localhost", ["127.0.0.1"])
    import ssl
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        cf, kf = f"{d}/c.pem", f"{d}/k.pem"
        open(cf, "wb").write(cert)
        open(kf, "wb").write(key)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cf, kf)
        with ExtenderServer(ssl_context=ctx) as srv:
            srv.filter_fn = lambda pod, names: ({"node-a"}, {}, {})
            ca = base64.b64encode(cert).decode()
            for ext in ({"tlsConfig": {"caData": ca}}, {"enableHTTPS": True}, {"tlsConfig": {"insecure": True}}):
                sched, store = _scheduler([{"urlPrefix": srv.url, "filterVerb": "filter", **ext}])
                store.add("Pod", _pod())
                attempt = _run(sched, store)
                assert (attempt.result, attempt.node) == ("scheduled", "node-a"), ext
            # a CA that did not sign the server's certificate: the TLS handshake fails
            other, _ = self_signed_cert("localhost", ["127.0.0.1"])
            sched, store = _scheduler([{"urlPrefix": srv.url, "filterVerb": "filter",
                                        "tlsConfig": {"caData": base64.b64encode(other).decode()}}])
            store.add("Pod", _pod())
            attempt = _run(sched, store)
            assert attempt.result == "error" and "CERTIFICATE_VERIFY_FAILED" in attempt.message


def test_pod_rejected_by_an_extender_is_retried_on_any_cluster_event(server: ExtenderServer) -> None:
    """Upstream's defaultEnqueueExtension for ``Extender``: the rejected pod leaves the
    unschedulable pool on the next cluster event (as upstream, its own PodScheduled=False
    status update is one) and then schedules once a node the extender accepts exists."""
    allowed = {"node-z"}
    server.filter_fn = lambda pod, names: ({n for n in names if n in allowed},
                                           {n: "not allowed" for n in names if n not in allowed}, {})
    sched, store = _scheduler([{"urlPrefix": server.url, "filterVerb": "filter"}], nodes=("node-a",))
    store.add("Pod", _pod())
    assert _run(sched, store).result == "unschedulable"
    store.add("Node", MakeNode().name("node-z").capacity(cpu="4", memory="8Gi", pods="110").obj())
    assert "default/p" not in sched.queue.unschedulable
    sched.clock.advance(10)
    sched.queue.flush_backoff_completed()
    attempt = _run(sched, store)
    assert (attempt.result, attempt.node) == ("scheduled", "node-z")


def test_bad_tls_settings_are_one_config_error(tmp_path: Any) -> None:
    from kubesched.errors import ConfigError

    with pytest.raises(ConfigError) as ei:
        _scheduler([{"urlPrefix": "https://127.0.0.1:1", "filterVerb": "f", "tlsConfig": {"caFile": "/nope/ca.pem"}}])
    assert str(ei.value) == ("extenders[0].tlsConfig.caFile: invalid TLS configuration: "
                             "open /nope/ca.pem: no such file or directory")
    with pytest.raises(ConfigError) as ei:
        _scheduler([{"urlPrefix": "https://127.0.0.1:1", "filterVerb": "f", "tlsConfig": {"caData": "!!"}}])
    assert str(ei.value).startswith("extenders[0].tlsConfig.caData: illegal base64 data")


def test_prioritize_verbs_of_several_extenders_run_concurrently() -> None:
    """Extender A answers its prioritize call only once extender B has received its own: called
    one after the other, A would time out (its score then ignored) and node-b would not win."""
    b_called = threading.Event()
    with ExtenderServer(prioritize=lambda pod, names: {"node-b": 10}) as a, \
            ExtenderServer(prioritize=lambda pod, names: (b_called.set(), {"node-c": 1})[1]) as b:
        a.holds["prioritize"] = b_called
        sched, store = _scheduler([
            {"urlPrefix": a.url, "prioritizeVerb": "prioritize", "weight": 5, "httpTimeout": "3s"},
            {"urlPrefix": b.url, "prioritizeVerb": "prioritize", "weight": 1, "httpTimeout": "3s"}], record=True)
        store.add("Pod", _pod())
        attempt = _run(sched, store)
    assert attempt.node == "node-b"
    assert attempt.record.final_score["node-b"][a.url] == 500
    assert attempt.record.final_score["node-c"][b.url] == 10


@pytest.mark.parametrize("answer", [{"Nodes": {"items": 7}}, {"NodeNames": ["ghost"]}, [1, 2], {"FailedNodes": [1]},
                                    {"Error": "quota exceeded"}])
def test_malformed_filter_answers_are_extender_errors(answer: Any) -> None:
    """Whatever the extender answers, the attempt ends as a SchedulerError with a message, never a crash."""
    with ExtenderServer() as srv:
        srv.answers["filter"] = answer
        sched, store = _scheduler([{"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True}])
        store.add("Pod", _pod())
        attempt = _run(sched, store)
    assert attempt.result == "error" and attempt.message
    if "Error" in answer:
        assert attempt.message == "quota exceeded"
    if "NodeNames" in answer:
        assert attempt.message == (f'extender "{srv.url}" claims a filtered node "ghost" which is not found in the '
                                   "input node list")


def _client_cert() -> tuple[bytes, bytes]:
    """A self-signed client certificate (clientAuth) and its key, PEM."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-scheduler")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def test_client_certificate_from_data_and_files(tmp_path: Any) -> None:
    """The extender requires a client certificate: given as certData/keyData or certFile/keyFile
    the call succeeds; without one the TLS handshake fails (a SchedulerError)."""
    import ssl

    cert, key = self_signed_cert("localhost", ["127.0.0.1"])
    ccert, ckey = _client_cert()
    (tmp_path / "s.pem").write_bytes(cert)
    (tmp_path / "s.key").write_bytes(key)
    (tmp_path / "c.pem").write_bytes(ccert)
    (tmp_path / "c.key").write_bytes(ckey)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp_path / "s.pem", tmp_path / "s.key")
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(cadata=ccert.decode())
    ca = base64.b64encode(cert).decode()
    with ExtenderServer(ssl_context=ctx) as srv:
        for tls in ({"caData": ca, "certData": base64.b64encode(ccert).decode(),
                     "keyData": base64.b64encode(ckey).decode()},
                    {"caData": ca, "certFile": str(tmp_path / "c.pem"), "keyFile": str(tmp_path / "c.key")}):
            sched, store = _scheduler([{"urlPrefix": srv.url, "filterVerb": "filter", "tlsConfig": tls}])
            store.add("Pod", _pod())
            assert _run(sched, store).result == "scheduled", tls
        sched, store = _scheduler([{"urlPrefix": srv.url, "filterVerb": "filter", "tlsConfig": {"caData": ca}}])
        store.add("Pod", _pod())
        assert _run(sched, store).result == "error"
    assert len(srv.calls("filter")) == 2


def test_preempt_answer_naming_an_unknown_victim_fails_preemption(server: ExtenderServer) -> None:
    """Upstream ``convertPodUIDToPod``: a victim UID not on that node is an error; preemption
    fails (nothing evicted) and says so in the message."""
    server.answers["preempt"] = {"NodeNameToMetaVictims": {"node-a": {"Pods": [{"UID": "ghost"}],
                                                                       "NumPDBViolations": 0}}}
    sched, store = _scheduler([{"urlPrefix": server.url, "preemptVerb": "preempt", "nodeCacheCapable": True}],
                              nodes=("node-a",))
    store.add("Pod", MakePod().name("low").namespace("default").uid("low").priority(0).req(cpu="4")
              .node("node-a").obj())
    store.add("Pod", MakePod().name("high").namespace("default").uid("high").priority(100).req(cpu="4").obj())
    attempt = _run(sched, store)
    assert attempt.result == "unschedulable"
    assert attempt.message.endswith(f"extender: {server.url} claims to preempt pod (UID: &{{ghost}}) on node: "
                                    "node-a, but the pod is not found on that node")
    assert store.get("Pod", "default", "low") is not None  # nothing evicted


def test_tls_server_name_is_the_name_checked() -> None:
    """A certificate for "extender.example" only (no IP): reached at 127.0.0.1 it verifies with
    ``serverName: extender.example`` and fails without."""
    import ssl
    import tempfile

    cert, key = self_signed_cert("extender.example", ips=())
    with tempfile.TemporaryDirectory() as d:
        open(f"{d}/c.pem", "wb").write(cert)
        open(f"{d}/k.pem", "wb").write(key)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(f"{d}/c.pem", f"{d}/k.pem")
    ca = base64.b64encode(cert).decode()
    with ExtenderServer(ssl_context=ctx) as srv:
        results = []
        for tls in ({"caData": ca, "serverName": "extender.example"}, {"caData": ca}):
            sched, store = _scheduler([{"urlPrefix": srv.url, "filterVerb": "filter", "tlsConfig": tls}])
            store.add("Pod", _pod())
            results.append(_run(sched, store))
    assert results[0].result == "scheduled"
    assert results[1].result == "error" and "CERTIFICATE_VERIFY_FAILED" in results[1].message
