"""Answers that must be kube-apiserver's (issue "The box as an API server people can trust", item 7):
each case states what the real server does; the box stays healthy after each."""

from __future__ import annotations

import http.client

from apiserver_helpers import Client

from kubesched.apiserver.launcher import ServerHandle

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
    assert _raw(srv, "GET", "/api/v1/namespaces", {}) == 403  # no credentials: system:anonymous, forbidden


def test_health_checks_answer_get_only(srv: ServerHandle) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert _raw(srv, "GET", path, {}) == 200
        assert _raw(srv, "POST", path, {}, b"{}") == 405, path


def test_numbers_outside_the_go_type_are_a_bad_request(client: Client) -> None:
    """encoding/json refuses a number outside the field's Go type (strconv ErrRange): 400 at decode,
    nothing stored; the largest int64 is fine and such a pod can be deleted."""
    pods = "/api/v1/namespaces/default/pods"

    def pod(name: str, grace: object, port: object = 80) -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"terminationGracePeriodSeconds": grace,
                         "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": port}]}]}}

    for bad, field, typ in ((1e30, "spec.terminationGracePeriodSeconds", "int64"),
                            (2**63, "spec.terminationGracePeriodSeconds", "int64")):
        code, status = client.req("POST", pods, pod("p", bad))
        assert code == 400, status
        assert status["message"] == (f'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number '
                                     f"{'1e+30' if bad == 1e30 else bad} into Go struct field PodSpec.{field} of "
                                     f"type {typ}")
        assert client.req("GET", f"{pods}/p")[0] == 404
    code, status = client.req("POST", pods, pod("q", 30, 2**31))
    assert code == 400 and "of type int32" in status["message"], status
    client.create(pods, pod("big", 2**63 - 1))
    assert client.req("DELETE", f"{pods}/big")[0] == 200


def test_bad_write_options_are_refused_before_anything_is_written(client: Client) -> None:
    """metav1 validation (handlers/create.go L109, delete.go): ``dryRun`` other than ``All`` and an
    unknown ``propagationPolicy`` are the options' Invalid (422, upstream's NewInvalid on
    CreateOptions/DeleteOptions), and nothing is created or deleted."""
    code, status = client.req("POST", f"{CMS}?dryRun=Bogus", {"apiVersion": "v1", "kind": "ConfigMap",
                                                                "metadata": {"name": "d"}})
    assert code == 422, status
    assert status["message"] == ('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                 '["Bogus"]: supported values: "All"')  # JSON, as v1.37.2 renders it
    assert client.req("GET", f"{CMS}/d")[0] == 404
    client.create(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}})
    code, status = client.req("DELETE", f"{CMS}/d?propagationPolicy=Bogus")
    assert code == 422, status
    assert status["message"].startswith('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                                        'value: "Bogus"')
    assert client.req("GET", f"{CMS}/d")[0] == 200
    assert client.req("POST", f"{CMS}?dryRun=All", {"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": "e"}})[0] == 201
    assert client.req("GET", f"{CMS}/e")[0] == 404  # a dry run stores nothing


def test_resource_version_must_be_a_string(client: Client) -> None:
    """The decoder refuses a number for ``metadata.resourceVersion`` (400), on create and update alike,
    instead of the update's precondition Conflict."""
    client.create(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rv"}})
    for method, path in (("POST", CMS), ("PUT", f"{CMS}/rv")):
        code, status = client.req(method, path, {"apiVersion": "v1", "kind": "ConfigMap",
                                                 "metadata": {"name": "rv", "resourceVersion": 5}})
        assert code == 400, (method, status)
        assert status["message"].endswith("json: cannot unmarshal number into Go struct field "
                                          "ObjectMeta.metadata.resourceVersion of type string")


def test_watch_timeout_seconds(client: Client) -> None:
    """get.go: ``timeoutSeconds`` is an int64 (``1e20`` does not decode: 400); a negative one gives a
    context that is already done, so the watch ends at once."""
    import time

    t0 = time.monotonic()
    assert client.req("GET", f"{CMS}?watch=true&timeoutSeconds=-1")[0] == 200
    assert time.monotonic() - t0 < 5
    for bad in ("1e20", "1.5", "99999999999999999999"):
        code, status = client.req("GET", f"{CMS}?watch=true&timeoutSeconds={bad}")
        assert code == 400, (bad, status)


def test_long_urls_are_read_as_go_reads_them(client: Client) -> None:
    """Go's http.Server reads request lines and headers up to 1 MiB (DefaultMaxHeaderBytes): a 20 KB
    label selector is an ordinary request, not a plain-text 400."""
    selector = ",".join(f"k{i}=v{i}" for i in range(2000))
    assert len(selector) > 16_000
    code, body = client.req("GET", f"{CMS}?labelSelector={selector}")
    assert code == 200, body
    assert body["items"] == []
