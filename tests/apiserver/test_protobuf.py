"""kubesched.apiserver.protobuf: Kubernetes protobuf request bodies → JSON-shaped objects, with
Go's JSON rules for the special types and for omitempty (kubectl itself is exercised in
tests/upstream/test_kubectl_generators.py)."""

from __future__ import annotations

import pytest

from kubesched.apiserver import protobuf
from kubesched.apiserver.launcher import run_server
from kubesched.testing.upstream import http_request


def _encode(api_version: str, kind: str, build) -> bytes:  # noqa: ANN001
    pkg = protobuf._package(api_version)
    cls = protobuf._message_class(f"{pkg}.{kind}")
    msg = cls()
    build(msg)
    env = protobuf._message_class("k8s.io.apimachinery.pkg.runtime.Unknown")()
    env.typeMeta.apiVersion, env.typeMeta.kind = api_version, kind
    env.raw = msg.SerializeToString()
    env.contentType = protobuf.MEDIA_TYPE
    return protobuf.MAGIC + env.SerializeToString()


def _pod(msg) -> None:  # noqa: ANN001
    msg.metadata.name = "p"
    msg.metadata.generateName = ""  # written by Go's marshaller; omitempty → dropped
    msg.metadata.creationTimestamp.seconds = 0  # the zero Time → dropped (Go: null)
    msg.metadata.labels["app"] = "web"
    c = msg.spec.containers.add()
    c.name, c.image = "c", "nginx"
    c.resources.requests["cpu"].string = "250m"
    port = c.ports.add()
    port.containerPort = 80
    c.livenessProbe.handler.httpGet.port.type = 1
    c.livenessProbe.handler.httpGet.port.strVal = "http"
    c.readinessProbe.handler.httpGet.port.type = 0
    c.readinessProbe.handler.httpGet.port.intVal = 8080
    msg.spec.terminationGracePeriodSeconds = 0  # a pointer: 0 is meaningful and kept
    msg.spec.hostNetwork = False  # non-pointer bool under omitempty → dropped


def test_special_types_and_omitempty() -> None:
    obj = protobuf.decode_object(_encode("v1", "Pod", _pod))
    assert obj["apiVersion"] == "v1" and obj["kind"] == "Pod"
    assert obj["metadata"] == {"name": "p", "labels": {"app": "web"}}
    c = obj["spec"]["containers"][0]
    assert c["resources"] == {"requests": {"cpu": "250m"}}
    assert c["ports"] == [{"containerPort": 80}]
    assert c["livenessProbe"]["httpGet"]["port"] == "http"
    assert c["readinessProbe"]["httpGet"]["port"] == 8080
    assert obj["spec"]["terminationGracePeriodSeconds"] == 0
    assert "hostNetwork" not in obj["spec"]


def test_times_durations_and_bytes() -> None:
    def secret(msg) -> None:  # noqa: ANN001
        msg.metadata.name = "s"
        msg.metadata.deletionTimestamp.seconds = 1767225600
        msg.data["k"] = b"\x00\xffhi"

    obj = protobuf.decode_object(_encode("v1", "Secret", secret))
    assert obj["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:00Z"
    assert obj["data"] == {"k": "AP9oaQ=="}
    assert protobuf._go_duration(3_723_000_000_000) == "1h2m3s"
    assert protobuf._go_duration(1_500_000_000) == "1.5s"
    assert protobuf._go_duration(300_000_000) == "300ms"


@pytest.mark.parametrize(("body", "message"), [
    (b'{"kind": "Pod"}', "missing the k8s magic prefix"),
    (protobuf.MAGIC + b"\xff\xff\xff", "unable to decode the protobuf envelope"),
])
def test_bad_bodies_are_clear_errors(body: bytes, message: str) -> None:
    with pytest.raises(protobuf.ProtobufError, match=message):
        protobuf.decode_object(body)


def test_unknown_kind_is_reported() -> None:
    env = protobuf._message_class("k8s.io.apimachinery.pkg.runtime.Unknown")()
    env.typeMeta.apiVersion, env.typeMeta.kind = "v1", "Pood"
    with pytest.raises(protobuf.ProtobufError, match='no kind "Pood" is registered for version "v1"'):
        protobuf.decode_object(protobuf.MAGIC + env.SerializeToString())


def test_server_accepts_a_protobuf_create_and_answers_json(tmp_path) -> None:  # noqa: ANN001
    with run_server(tmp_path / "kc") as srv:
        body = _encode("v1", "Pod", _pod)
        status, headers, got = http_request(srv.url + "/api/v1/namespaces/default/pods", srv.token,
                                            srv.ssl_context(), "POST", body,
                                            headers={"Content-Type": protobuf.MEDIA_TYPE})
        assert status == 201, got
        assert headers["Content-Type"].startswith("application/json")
        assert got["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m"}
        status, _, got = http_request(srv.url + "/api/v1/namespaces/default/pods", srv.token, srv.ssl_context(),
                                      "POST", protobuf.MAGIC + b"\xff", headers={"Content-Type": protobuf.MEDIA_TYPE})
        assert status == 400 and got["reason"] == "BadRequest"


def test_server_accepts_protobuf_delete_options(tmp_path) -> None:  # noqa: ANN001
    """client-go's typed clients send a DELETE's DeleteOptions as protobuf (helm uninstall purges its
    release Secrets so): the body is decoded as such (apiVersion v1, the meta.k8s.io message), and
    its gracePeriodSeconds / propagationPolicy validated as a JSON body's are."""
    with run_server(tmp_path / "kc") as srv:
        def delete_options(**fields) -> bytes:  # noqa: ANN003
            msg = protobuf._message_class(f"{protobuf._META}.DeleteOptions")(**fields)
            env = protobuf._message_class("k8s.io.apimachinery.pkg.runtime.Unknown")()
            env.typeMeta.apiVersion, env.typeMeta.kind = "v1", "DeleteOptions"
            env.raw = msg.SerializeToString()
            env.contentType = protobuf.MEDIA_TYPE
            return protobuf.MAGIC + env.SerializeToString()

        path = "/api/v1/namespaces/default/configmaps"
        for name in ("a", "b"):
            status, _, got = http_request(srv.url + path, srv.token, srv.ssl_context(), "POST",
                                          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
            assert status == 201, got
        status, _, got = http_request(srv.url + path + "/a", srv.token, srv.ssl_context(), "DELETE",
                                      delete_options(), headers={"Content-Type": protobuf.MEDIA_TYPE})
        assert status == 200, got
        status, _, got = http_request(srv.url + path + "/b", srv.token, srv.ssl_context(), "DELETE",
                                      delete_options(propagationPolicy="Sideways"),
                                      headers={"Content-Type": protobuf.MEDIA_TYPE})
        assert status == 422 and "propagationPolicy" in got["message"], got
