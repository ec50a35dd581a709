"""Answers that must be kube-apiserver's (issue "The box as an API server people can trust", item 7):
each case states what the real server does; the box stays healthy after each."""

from __future__ import annotations

import http.client

from apiserver_helpers import Client

from kubesched.apiserver.testing import ServerHandle

CMS = "/api/v1/namespaces/default/configmaps"
BODY = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}}'


def _raw(srv: ServerHandle, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> int:
    host = srv.url.split("//", 1)[1]
    c = http.client.HTTPSConnection(host, context=srv.ssl_context(), timeout=10)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def test_a_body_of_an_unknown_media_type_is_415(client: Client) -> None:
    """negotiation.NegotiateInputSerializer → errors.NewUnsupportedMediaType."""
    for ctype in ("text/plain", "application/xml"):
        code, status = client.req("POST", CMS, raw=BODY, ctype=ctype)
        assert code == 415, (ctype, status)
        assert status["reason"] == "UnsupportedMediaType"
        assert status["message"].startswith("the body of the request was in an unknown format - accepted media "
                                             "types include: application/json, application/yaml")
    assert client.req("GET", f"{CMS}/x")[0] == 404  # nothing created
    code, _ = client.req("POST", CMS, raw=BODY, ctype="application/json; charset=utf-8")
    assert code == 201


def test_the_bearer_scheme_is_case_insensitive(srv: ServerHandle) -> None:
    """bearertoken.go: ``strings.ToLower(parts[0]) == "bearer"``."""
    for scheme in ("Bearer", "bearer", "BEARER"):
        assert _raw(srv, "GET", "/api/v1/namespaces", {"Authorization": f"{scheme} {srv.token}"}) == 200, scheme
    assert _raw(srv, "GET", "/api/v1/namespaces", {"Authorization": f"Basic {srv.token}"}) == 401
    assert _raw(srv, "GET", "/api/v1/namespaces", {"Authorization": f"Bearer {srv.token}x"}) == 401
    assert _raw(srv, "GET", "/api/v1/namespaces", {}) == 401


def test_health_checks_answer_get_only(srv: ServerHandle) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert _raw(srv, "GET", path, {}) == 200
        assert _raw(srv, "POST", path, {}, b"{}") == 405, path
