"""The cheap create path of managedFields gives the plain algorithm's answer (and the create path's
other shortcuts: the time stamp, the uid).

A POST records its manager's ``Update`` entry over the decoded, defaulted request object
(``handlers/create.go``, see tests/upstream/test_managed_fields_update.py for the answers checked
against the real kube-apiserver). The box computes that field set once per object shape
(:func:`kubesched.apiserver.managers.track_create` remembers it for objects equal but for the
metadata fields never owned) and walks the schema through a :class:`~kubesched.apiserver.apply.CachedResolver`;
these tests hold both to the plain path (a deep copy, defaulting, ``track_update`` over the plain
``$ref`` resolver) on public manifests and on objects built to tell shapes apart.
"""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api import schemas
from kubesched.apiserver import apply as ssa
from kubesched.apiserver.admission import apply_defaults
from kubesched.apiserver.launcher import build_server
from kubesched.apiserver.managers import track_create
from kubesched.apiserver.metatime import now_rfc3339
from kubesched.apiserver.registry import info_for_object, new_uid

DATA = Path(__file__).resolve().parents[1] / "data" / "public"


def _manifests() -> list[dict[str, Any]]:
    docs = []
    for name in ("argocd-install.yaml", "microservices-demo.yaml"):
        docs += [d for d in yaml.safe_load_all((DATA / name).read_text()) if d]
    return [d for d in docs if d["kind"] not in ("CustomResourceDefinition", "NetworkPolicy")]  # not served


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def _event(name: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
            "reportingInstance": f"i-{name}", "action": "Binding", "reason": reason, "type": "Normal",
            "regarding": {"kind": "Pod", "namespace": "default", "name": f"p-{name}", "uid": name},
            "note": f"Successfully assigned default/p-{name} to n", **extra}


#: objects whose field sets differ only by list keys, set values, empty maps or nulls
_LOOKALIKES = [
    _pod("a"),
    _pod("a", tolerations=[{"key": "k", "operator": "Exists"}]),
    _pod("a", containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]),
    _pod("a", containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 81}]}]),
    _pod("a", containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]),
    _pod("a", containers=[{"name": "d", "image": "nginx"}]),
    _pod("a", nodeSelector={}),
    _pod("a", nodeSelector={"zone": "a"}),
    _pod("a", affinity={"nodeAffinity": None}),
    {**_pod("a"), "metadata": {"name": "a", "generateName": "a-"}},
    {**_pod("a"), "metadata": {"name": "a", "annotations": {"x": "1"}}},
    {**_pod("a"), "metadata": {"name": "a", "finalizers": ["f"]}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": "1"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},
    # defaulting that reads values outside lists (hostNetwork -> hostPort, Service type, Secret type)
    _pod("a", hostNetwork=True, containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]),
    _pod("a", hostNetwork=False, containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]),
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
     "spec": {"type": "ClusterIP", "ports": [{"port": 80}]}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
     "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": ""},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque"},
    # Events: remembered by skeleton (no defaulting), values outside lists do not matter
    _event("a", "Scheduled"),
    _event("b", "Preempted", note=""),
    _event("c", "Scheduled", series={"count": 2, "lastObservedTime": "2026-01-01T00:00:00.000000Z"}),
    _event("d", "Scheduled", series={"count": 7, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}),
    _event("e", "Scheduled", related={"kind": "Node", "name": "n"}),
    _event("f", "Scheduled", related=None),
    _event("g", "Scheduled", regarding={}),
    {**_event("h", "x"), "metadata": {"name": "h", "labels": {"a": "1"}, "finalizers": ["f"]}},
    {**_event("i", "x"), "metadata": {"name": "i", "labels": {"a": "2"}, "finalizers": ["g"]}},
    {**_event("j", "x"), "metadata": {"name": "j", "labels": {}}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "k"}, "involvedObject": {"kind": "Pod", "name": "p"},
     "reason": "Scheduled", "message": "m", "count": 1, "type": "Normal"},
]


def _plain(server: Any, obj: dict[str, Any]) -> Any:
    """The creator's fieldsV1 the plain way (what the box computed before the cache)."""
    info = info_for_object(obj)
    api = server.api_version
    name = schemas.definition_for_gvk(info.group, info.version, info.kind, api=api)
    schema = schemas.definitions(api).get(name) if name else None
    seen = copy.deepcopy(obj)
    apply_defaults(info.plural, seen)
    ssa.track_update({}, seen, schema, lambda s: schemas.resolve(s, api), manager="m", api_version=info.api_version,
                     now="t", strip_status="status" in info.subresources)
    mf = seen["metadata"].get("managedFields")
    return mf[0]["fieldsV1"] if mf else None


def _tracked(server: Any, obj: dict[str, Any], name: str) -> Any:
    obj = copy.deepcopy(obj)
    obj["metadata"]["name"] = name
    stored: dict[str, Any] = {"metadata": {}}
    track_create(server, info_for_object(obj), obj, stored, "m")
    mf = stored["metadata"].get("managedFields")
    if mf:
        assert [(e["manager"], e["operation"], e["apiVersion"]) for e in mf] == [
            ("m", "Update", info_for_object(obj).api_version)]
    return mf[0]["fieldsV1"] if mf else None


@pytest.mark.parametrize("objs", [_manifests(), _LOOKALIKES], ids=["public-manifests", "lookalikes"])
def test_create_field_sets_equal_the_plain_algorithm(objs: list[dict[str, Any]]) -> None:
    server = build_server(None, token=None)
    for obj in objs:
        want = _plain(server, obj)
        # first the computed answer, then the remembered one (another name, same shape)
        assert _tracked(server, obj, "first") == want, obj
        assert _tracked(server, obj, "second") == want, obj
    # and every lookalike again after all the others were remembered
    for obj in objs:
        assert _tracked(server, obj, "third") == _plain(server, obj), obj


def test_cached_resolver_walks_like_the_plain_resolver() -> None:
    api = schemas.DEFAULT_VERSION
    plain = lambda s: schemas.resolve(s, api)  # noqa: E731
    cached = ssa.CachedResolver(plain)
    for obj in [*_manifests(), *_LOOKALIKES]:
        info = info_for_object(obj)
        name = schemas.definition_for_gvk(info.group, info.version, info.kind, api=api)
        schema = schemas.definitions(api).get(name) if name else None
        for _ in range(2):
            assert ssa.field_set(obj, schema, cached) == ssa.field_set(obj, schema, plain)


def test_now_rfc3339_is_whole_seconds_utc() -> None:
    for delta in (0.0, -30.5, 0.999, 3600.0):
        before = (datetime.now(UTC) + timedelta(seconds=delta)).strftime("%Y-%m-%dT%H:%M:%SZ")
        got = now_rfc3339(delta)
        after = (datetime.now(UTC) + timedelta(seconds=delta)).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert before <= got <= after


def test_new_uid_is_a_random_version_4_uuid() -> None:
    uids = [new_uid() for _ in range(600)]  # crosses a refill of the random pool
    assert len(set(uids)) == len(uids)
    for u in uids:
        parsed = uuid.UUID(u)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, u)


def test_an_update_that_takes_no_field_keeps_its_managers_time() -> None:
    """managedfieldsupdater.go: only an operation that took fields stamps its manager's time."""
    api = schemas.DEFAULT_VERSION
    name = schemas.definition_for_gvk("", "v1", "ConfigMap", api=api)
    schema, resolve = schemas.definitions(api).get(name or ""), ssa.CachedResolver(lambda s: schemas.resolve(s, api))
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    ssa.track_update({}, old, schema, resolve, manager="m", api_version="v1", now="T1")
    same = copy.deepcopy(old)
    ssa.track_update(old, same, schema, resolve, manager="m", api_version="v1", now="T2")
    assert same["metadata"]["managedFields"] == old["metadata"]["managedFields"]
    changed = copy.deepcopy(old)
    changed["data"]["b"] = "2"
    ssa.track_update(old, changed, schema, resolve, manager="m", api_version="v1", now="T3")
    [entry] = changed["metadata"]["managedFields"]
    assert entry["time"] == "T3" and entry["fieldsV1"] == {"f:data": {".": {}, "f:a": {}, "f:b": {}}}


def _skeleton_plain(x: Any) -> Any:
    """The documented formula: every string and number outside a list becomes its type's zero value."""
    if isinstance(x, dict):
        return {k: _skeleton_plain(v) for k, v in x.items()}
    if type(x) in (str, int, float):
        return type(x)()
    return x


def test_skeleton_matches_the_plain_formula() -> None:
    """The shape key of a kind without defaults (Events) zeroes scalars outside lists; bools,
    nulls and lists stay whole, types are kept (``0`` vs ``0.0``)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kubesched.apiserver.managers import _skeleton

    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c,
                                                                                           max_size=4), max_leaves=20)

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(st.text(max_size=4), json_values, max_size=5))
    def check(obj: dict[str, Any]) -> None:
        got, want = _skeleton(obj), _skeleton_plain(obj)
        assert got == want
        assert repr(got) == repr(want)  # same types (0 is not 0.0, False is not 0)

    check()
    assert _skeleton({"a": {"b": 1.5, "c": True, "d": [1, "x"]}, "e": "s"}) == {"a": {"b": 0.0, "c": True,
                                                                                       "d": [1, "x"]}, "e": ""}
