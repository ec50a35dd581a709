"""Watch semantics over real HTTP: RV 0/unset/N, selector transitions, bookmarks, timeouts, 410."""

from __future__ import annotations

from apiserver_helpers import Client, node, pod

from kubesched.apiserver.launcher import ServerHandle

PODS = "/api/v1/namespaces/default/pods"


def _phase(client: Client, name: str, phase: str) -> None:
    code, _ = client.req("PATCH", f"{PODS}/{name}/status", {"status": {"phase": phase}},
                         ctype="application/merge-patch+json")
    assert code == 200


def test_watch_from_zero_sends_synthetic_added_then_changes(client: Client) -> None:
    client.create(PODS, pod("a"))
    client.create(PODS, pod("b"))
    w = client.watch(f"{PODS}?watch=1&resourceVersion=0")
    assert w.status == 200
    first = w.take(2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in first] == [("ADDED", "a"), ("ADDED", "b")]
    client.create(PODS, pod("c"))
    ev = w.next()
    assert ev is not None and ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "c"
    client.req("DELETE", f"{PODS}/a")
    ev = w.next()
    assert ev is not None and ev["type"] == "DELETED" and ev["object"]["metadata"]["name"] == "a"
    w.close()


def test_watch_from_a_resource_version_replays_only_later_events(client: Client) -> None:
    client.create(PODS, pod("a"))
    rv = client.get(PODS)["metadata"]["resourceVersion"]
    client.create(PODS, pod("b"))
    _phase(client, "b", "Running")
    w = client.watch(f"{PODS}?watch=true&resourceVersion={rv}&timeoutSeconds=5")
    evs = w.take(2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [("ADDED", "b"), ("MODIFIED", "b")]
    assert int(evs[1]["object"]["metadata"]["resourceVersion"]) > int(evs[0]["object"]["metadata"]["resourceVersion"])
    w.close()


def test_selector_transitions_arrive_as_deleted_and_added(client: Client) -> None:
    """The scheduler's pod informer filters status.phase!=Succeeded,status.phase!=Failed."""
    client.create(PODS, pod("a"))
    rv = client.get(PODS)["metadata"]["resourceVersion"]
    sel = "fieldSelector=status.phase!%3DSucceeded,status.phase!%3DFailed"
    w = client.watch(f"/api/v1/pods?watch=1&{sel}&resourceVersion={rv}")
    _phase(client, "a", "Running")
    _phase(client, "a", "Succeeded")
    _phase(client, "a", "Running")  # (not a real transition, but the selector must follow it)
    evs = w.take(3)
    assert [e["type"] for e in evs] == ["MODIFIED", "DELETED", "ADDED"]
    deleted = evs[1]["object"]
    assert deleted["status"]["phase"] == "Running"  # the last state that matched ...
    assert int(deleted["metadata"]["resourceVersion"]) > int(evs[0]["object"]["metadata"]["resourceVersion"])
    w.close()
    # label selectors too
    w = client.watch(f"{PODS}?watch=1&labelSelector=app%3Dx&resourceVersion="
                     f"{client.get(PODS)['metadata']['resourceVersion']}")
    client.req("PATCH", f"{PODS}/a", {"metadata": {"labels": {"app": "x"}}}, ctype="application/merge-patch+json")
    client.req("PATCH", f"{PODS}/a", {"metadata": {"labels": {"app": "y"}}}, ctype="application/merge-patch+json")
    assert [e["type"] for e in w.take(2)] == ["ADDED", "DELETED"]
    w.close()


def test_single_object_watch_by_name_and_namespace_scoping(client: Client) -> None:
    client.create(PODS, pod("x"))
    client.create(PODS, pod("y"))
    w = client.watch(f"{PODS}?watch=1&fieldSelector=metadata.name%3Dy")
    ev = w.next()
    assert ev is not None and ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "y"
    client.req("DELETE", f"{PODS}/x")
    client.req("DELETE", f"{PODS}/y")
    ev = w.next()
    assert ev is not None and ev["type"] == "DELETED" and ev["object"]["metadata"]["name"] == "y"
    w.close()


def test_timeout_seconds_ends_the_stream_with_a_bookmark(client: Client) -> None:
    rv = client.get(PODS)["metadata"]["resourceVersion"]
    w = client.watch(f"{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=1&allowWatchBookmarks=true")
    ev = w.next()
    assert ev is not None and ev["type"] == "BOOKMARK"
    assert ev["object"]["kind"] == "Pod" and ev["object"]["metadata"]["resourceVersion"] == rv
    assert w.next() is None  # clean end of stream
    w.close()


def test_watch_from_a_compacted_revision_gets_an_expired_error_event(srv: ServerHandle, client: Client) -> None:
    client.create(PODS, pod("a"))
    old = client.get(PODS)["metadata"]["resourceVersion"]
    client.create(PODS, pod("b"))
    srv.faults.compact()
    w = client.watch(f"{PODS}?watch=1&resourceVersion={int(old) - 1}")
    assert w.status == 200
    ev = w.next()
    assert ev is not None and ev["type"] == "ERROR"
    st = ev["object"]
    assert st["kind"] == "Status" and st["code"] == 410 and st["reason"] == "Expired"
    assert st["message"].startswith("too old resource version:")
    assert w.next() is None
    code, body = client.req("GET", f"{PODS}?resourceVersion={int(old) - 1}&resourceVersionMatch=Exact")
    assert code == 410 and body["reason"] == "Expired"
    # the current RV still works
    now = client.get(PODS)["metadata"]["resourceVersion"]
    w2 = client.watch(f"{PODS}?watch=1&resourceVersion={now}")
    client.create(PODS, pod("c"))
    ev = w2.next()
    assert ev is not None and ev["object"]["metadata"]["name"] == "c"
    w2.close()


def test_send_initial_events_ends_with_annotated_bookmark_or_is_rejected(client: Client) -> None:
    client.create("/api/v1/nodes", node("n1"))
    client.create("/api/v1/nodes", node("n2"))
    w = client.watch("/api/v1/nodes?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                     "&resourceVersionMatch=NotOlderThan")
    evs = w.take(3)
    assert [e["type"] for e in evs] == ["ADDED", "ADDED", "BOOKMARK"]
    assert evs[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    w.close()
    code, body = client.req("GET", "/api/v1/nodes?watch=1&sendInitialEvents=true")
    assert code == 422 and body["reason"] == "Invalid"


def test_close_watches_fault_ends_streams_cleanly(srv: ServerHandle, client: Client) -> None:
    rv = client.get(PODS)["metadata"]["resourceVersion"]
    w = client.watch(f"{PODS}?watch=1&resourceVersion={rv}")
    client.create(PODS, pod("a"))
    assert w.next() is not None
    assert srv.faults.close_watches() >= 1
    assert w.next() is None
    w.close()


def test_legacy_watch_paths_and_list_option_validation(client: Client) -> None:
    client.create(PODS, pod("a"))
    client.create(PODS, pod("b"))
    w = client.watch("/api/v1/watch/namespaces/default/pods/b")
    ev = w.next()
    assert ev is not None and ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "b"
    w.close()
    code, body = client.req("GET", f"{PODS}?resourceVersionMatch=Exact")
    assert code == 422 and body["reason"] == "Invalid"
    code, body = client.req("GET", f"{PODS}?resourceVersion=0&resourceVersionMatch=Exact")
    assert code == 422
