"""Fault injection: each fault, injected, with a client that copes — nothing lost, nothing done twice."""

from __future__ import annotations

import threading
import time
from typing import Any

from apiserver_helpers import Client, node, pod

from kubesched.apiserver.launcher import ServerHandle

PODS = "/api/v1/namespaces/default/pods"


def test_failed_bindings_change_nothing_and_a_retry_binds_once(srv: ServerHandle, client: Client) -> None:
    client.create("/api/v1/nodes", node("n1"))
    client.create(PODS, pod("a"))
    rv = client.get(f"{PODS}/a")["metadata"]["resourceVersion"]
    binding = {"metadata": {"name": "a"}, "target": {"kind": "Node", "name": "n1"}}
    srv.faults.fail_writes("pods", subresource="binding", code=500)
    code, body = client.req("POST", f"{PODS}/a/binding", binding)
    assert code == 500 and body["reason"] == "InternalError"
    srv.faults.clear()
    srv.faults.fail_writes("pods", subresource="binding", code=409)
    code, body = client.req("POST", f"{PODS}/a/binding", binding)
    assert code == 409 and body["reason"] == "Conflict"
    after = client.get(f"{PODS}/a")
    assert after["metadata"]["resourceVersion"] == rv and "nodeName" not in after["spec"]
    # other writes to pods are untouched by a binding fault
    assert client.req("PATCH", f"{PODS}/a", {"metadata": {"labels": {"x": "1"}}},
                      ctype="application/merge-patch+json")[0] == 200
    srv.faults.clear()
    assert client.req("POST", f"{PODS}/a/binding", binding)[0] == 201
    assert client.req("POST", f"{PODS}/a/binding", binding)[0] == 409  # the retry of a success is refused
    assert client.get(f"{PODS}/a")["spec"]["nodeName"] == "n1"


def test_a_fraction_of_failed_creates_retried_gives_each_object_once(srv: ServerHandle, client: Client) -> None:
    srv.faults.fail_writes("configmaps", fraction=0.5, code=500)
    attempts = 0
    for i in range(40):
        for _ in range(100):
            attempts += 1
            code, body = client.req("POST", "/api/v1/namespaces/default/configmaps",
                                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})
            if code == 201:
                break
            assert code == 500, body
    assert srv.faults.injected == attempts - 40 > 0
    names = [c["metadata"]["name"] for c in client.get("/api/v1/namespaces/default/configmaps")["items"]]
    assert sorted(names) == sorted(f"c{i}" for i in range(40))


def test_latency_delays_requests(srv: ServerHandle, client: Client) -> None:
    srv.faults.latency = 0.3
    t0 = time.monotonic()
    assert client.req("GET", "/api/v1/nodes")[0] == 200
    assert time.monotonic() - t0 >= 0.3
    srv.faults.latency = 0.0


def test_pause_holds_requests_until_resume_and_they_run_once(srv: ServerHandle, client: Client) -> None:
    srv.faults.pause()
    result: dict[str, Any] = {}

    def create() -> None:
        result["r"] = client.req("POST", PODS, pod("held"))

    t = threading.Thread(target=create)
    t.start()
    time.sleep(0.5)
    assert t.is_alive() and "r" not in result
    srv.faults.resume()
    t.join(10)
    assert result["r"][0] == 201
    assert [p["metadata"]["name"] for p in client.get(PODS)["items"]] == ["held"]


def _resume_watch(client: Client, path: str, rv: str, want: int, deadline: float) -> tuple[list[Any], int]:
    """A reflector in miniature: watch from rv; on a clean close rewatch from the last RV;
    on 410 relist. Returns (events seen, number of streams opened)."""
    seen: list[Any] = []
    streams = 0
    while len(seen) < want:
        assert time.monotonic() < deadline, f"only {len(seen)} of {want} events"
        w = client.watch(f"{path}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}")
        streams += 1
        while True:
            ev = w.next()
            if ev is None:
                break
            if ev["type"] == "ERROR":
                raise AssertionError(ev)
            rv = ev["object"]["metadata"]["resourceVersion"]
            if ev["type"] != "BOOKMARK":
                seen.append((ev["type"], ev["object"]["metadata"]["name"], rv))
            if len(seen) >= want:
                break
        w.close()
    return seen, streams


def test_watches_closed_every_interval_resume_without_gaps_or_duplicates(srv: ServerHandle, client: Client) -> None:
    srv.faults.watch_close_every = 0.3
    rv = client.get(PODS)["metadata"]["resourceVersion"]
    n = 30

    def writer() -> None:
        for i in range(n):
            client.create(PODS, pod(f"p{i}"))
            time.sleep(0.03)

    t = threading.Thread(target=writer)
    t.start()
    seen, streams = _resume_watch(client, PODS, rv, n, time.monotonic() + 60)
    t.join()
    assert [s[1] for s in seen] == [f"p{i}" for i in range(n)]
    assert all(s[0] == "ADDED" for s in seen)
    assert streams > 1  # the fault really closed streams
    srv.faults.watch_close_every = None


def test_forced_compaction_expires_old_watchers_and_a_relist_recovers(srv: ServerHandle, client: Client) -> None:
    client.create(PODS, pod("a"))
    lst = client.get(PODS)
    rv = lst["metadata"]["resourceVersion"]
    client.create(PODS, pod("b"))
    client.req("DELETE", f"{PODS}/a")
    srv.faults.compact()
    w = client.watch(f"{PODS}?watch=1&resourceVersion={int(rv) - 1}")
    ev = w.next()
    assert ev is not None and ev["type"] == "ERROR" and ev["object"]["reason"] == "Expired"
    w.close()
    # relist (RV "") and rewatch: the state is complete and later events arrive once
    relist = client.get(PODS)
    assert [p["metadata"]["name"] for p in relist["items"]] == ["b"]
    w = client.watch(f"{PODS}?watch=1&resourceVersion={relist['metadata']['resourceVersion']}")
    client.create(PODS, pod("c"))
    ev = w.next()
    assert ev is not None and (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "c")
    w.close()
