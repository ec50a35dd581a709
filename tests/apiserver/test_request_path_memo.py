"""The box's per-request shortcuts answer as the plain computations they replace (issue 18 §3):
a namespace's ``Terminating`` phase read from its bytes only when they can hold it, a
:class:`~kubesched.apiserver.resources.ResourceInfo`'s names and hash derived once, and the bearer
token checked with one comparison of the whole ``Authorization`` header."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict, CIMultiDictProxy

from kubesched.apiserver import resources as res
from kubesched.apiserver.authn import Authentication
from kubesched.apiserver.crd import custom_resources
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.registry import namespace_terminating

_WORDS = st.sampled_from(["Terminating", "Active", "terminating", "Terminating ", "", "x", '"Terminating"'])
_TEXT = st.one_of(_WORDS, st.text(max_size=12))


def _plain_terminating(data: bytes) -> bool:
    """NamespaceLifecycle's check on the decoded namespace (what the box did before)."""
    return (orjson.loads(data).get("status") or {}).get("phase") == "Terminating"


@settings(max_examples=200, deadline=None)
@given(phase=st.one_of(st.none(), _TEXT), labels=st.dictionaries(_TEXT, _TEXT, max_size=3),
       annotations=st.dictionaries(_TEXT, _TEXT, max_size=3), finalizers=st.lists(_TEXT, max_size=2),
       status_null=st.booleans())
def test_namespace_terminating_equals_the_decoded_check(phase: str | None, labels: dict[str, str],
                                                         annotations: dict[str, str], finalizers: list[str],
                                                         status_null: bool) -> None:
    status: Any = None if status_null else ({} if phase is None else {"phase": phase})
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "ns", "labels": labels, "annotations": annotations},
          "spec": {"finalizers": finalizers}, "status": status}
    data = orjson.dumps(ns)
    assert namespace_terminating(data) == _plain_terminating(data)


def _crd_infos() -> list[res.ResourceInfo]:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": v, "served": True, "storage": v == "v1",
                                  "schema": {"openAPIV3Schema": {"type": "object"}}} for v in ("v1", "v2")]},
           "status": {"conditions": [{"type": "Established", "status": "True"}]}}
    return [c.info for c in custom_resources(crd)]


def test_resource_info_derived_names_and_hash() -> None:
    infos = [*res.RESOURCES, *_crd_infos()]
    assert len(infos) > len(res.RESOURCES)
    for info in infos:
        gv = f"{info.group}/{info.version}" if info.group else info.version
        assert info.group_version == gv == info.api_version
        assert info.key == (info.storage or (f"{info.group}/{info.plural}" if info.group else info.plural))
        copy = dataclasses.replace(info)
        assert copy == info and hash(copy) == hash(info) and copy.key == info.key
        changed = dataclasses.replace(info, plural=info.plural + "x")
        assert changed != info and changed.key != info.key or info.storage
        # selectable fields through the cached plan, again after the copy (the plan is per instance)
        obj = {"metadata": {"name": "a", "namespace": "b"}, "spec": {"nodeName": "n"}, "status": {"phase": "P"}}
        assert res.selectable_fields(info, obj) == res.selectable_fields(copy, obj) == \
            res.selectable_fields(info, obj, info.field_names)
    assert len({*infos}) == len(infos)  # distinct resources stay distinct as dict keys


class _Authn(Authentication):
    """The authentication filter alone: what it decided is recorded instead of acted on."""

    authorization_mode = "RBAC"

    def __init__(self, token: str | None) -> None:
        self._init_authn(token, anonymous_auth=True)
        self.seen: list[Any] = []

    def _impersonate(self, request: Any, user: Any, wanted: Any) -> None:
        self.seen.append(("impersonate", user, wanted))

    def _authorize_anonymous(self, request: Any) -> None:
        self.seen.append(("anonymous",))


def _plain_authenticate(srv: _Authn, request: Any) -> None:
    """The filter without the exact-header shortcut (what the box did before): the same method
    with the shortcut's expected header unset, so every request takes the general path."""
    saved = srv._bearer
    srv._bearer = (srv.token, None)
    try:
        srv._authenticate(request)
    finally:
        srv._bearer = saved


def _outcome(fn: Any, srv: _Authn, request: Any) -> tuple[Any, ...]:
    srv.seen.clear()
    try:
        fn(request)
    except APIError as e:
        return ("error", e.status, tuple(srv.seen))
    return ("ok", tuple(srv.seen))


_TOKENS = st.sampled_from(["s3cret", "tok-\u00e9", "a b", ""])
_HEADER = st.one_of(st.none(), st.builds(lambda s, t, pad: f"{pad}{s} {t}{pad}",
                                         st.sampled_from(["Bearer", "bearer", "BEARER", "Basic", ""]),
                                         st.one_of(_TOKENS, st.text(max_size=8)), st.sampled_from(["", " ", "\t"])),
                    st.text(max_size=20))


@settings(max_examples=300, deadline=None)
@given(token=st.one_of(st.none(), _TOKENS), header=_HEADER,
       impersonate=st.sampled_from([{}, {"Impersonate-User": "bob"}, {"Impersonate-Group": "g"},
                                    {"Impersonate-User": "bob", "Impersonate-Group": "g"}]),
       path=st.sampled_from(["/api/v1/pods", "/version", "/healthz", "/apis"]))
def test_authentication_shortcut_decides_as_the_plain_filter(token: str | None, header: str | None,
                                                             impersonate: dict[str, str], path: str) -> None:
    srv = _Authn(token)
    headers = CIMultiDict(impersonate)
    if header is not None:
        headers["Authorization"] = header
    request = SimpleNamespace(path=path, headers=CIMultiDictProxy(headers))
    fast = _outcome(srv._authenticate, srv, request)
    plain = _outcome(lambda r: _plain_authenticate(srv, r), srv, request)
    assert fast == plain
