"""Size and amplification limits of the box, each as kube-apiserver / etcd answer (issue "The box as
an API server people can trust", item 3). The server stays healthy after each.

- request bodies over ``MaxRequestBodyBytes`` (3 MiB) → 413 RequestEntityTooLarge
  "Request entity too large: limit is 3145728" (apiserver ``handlers/rest.go`` limitedReadBody);
- a stored object over etcd's ``--max-request-bytes`` (1.5 MiB) → 500 "etcdserver: request is too large";
- ConfigMap / Secret data over ``core.MaxSecretSize`` (1 MiB) → 422 (``ValidateConfigMap``/``ValidateSecret``);
- JSON patch ``copy`` operations adding over ``JSONPatchMaxCopyBytes`` (3 MiB) → 422 with json-patch's
  ``AccumulatedCopySizeError`` text; more than 10,000 operations → 413.
"""

from __future__ import annotations

import json
import time

from apiserver_helpers import Client

CMS = "/api/v1/namespaces/default/configmaps"


def _cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def _healthy(client: Client) -> None:
    assert client.req("GET", "/healthz")[0] == 200
    client.create(CMS, _cm(f"after-{time.monotonic_ns()}", k="v"))


def test_request_body_over_3_mib_is_413(client: Client) -> None:
    body = json.dumps(_cm("big", k="x" * (3 * 1024 * 1024))).encode()
    code, status = client.req("POST", CMS, raw=body)
    assert code == 413, status
    assert status["reason"] == "RequestEntityTooLarge"
    assert status["message"] == "Request entity too large: limit is 3145728"
    _healthy(client)


def test_config_map_data_over_1_mib_is_invalid(client: Client) -> None:
    code, status = client.req("POST", CMS, _cm("cm", a="x" * (600 * 1024), b="y" * (500 * 1024)))
    assert code == 422, status
    # field path "" (the whole object): field.Error's "%s: %s" gives ": Too long: ..."
    assert status["message"] == 'ConfigMap "cm" is invalid: : Too long: may not be more than 1048576 bytes'
    assert status["reason"] == "Invalid"
    client.create(CMS, _cm("cm", a="x" * (1024 * 1024)))  # exactly 1 MiB is allowed
    _healthy(client)


def test_config_map_keys_are_checked(client: Client) -> None:
    code, status = client.req("POST", CMS, _cm("keys", **{"bad key": "v"}))
    assert code == 422, status
    assert "a valid config key must consist of alphanumeric characters" in status["message"]


def test_secret_data_over_1_mib_is_invalid(client: Client) -> None:
    import base64

    value = base64.b64encode(b"s" * (1024 * 1024 + 1)).decode()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": value}}
    code, status = client.req("POST", "/api/v1/namespaces/default/secrets", secret)
    assert code == 422, status
    assert status["message"].endswith("data: Too long: may not be more than 1048576 bytes"), status


def test_object_over_etcds_request_limit_is_500(client: Client) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "huge"},
            "status": {"images": [{"names": [f"registry.example/img-{i:06d}:" + "t" * 60], "sizeBytes": i}
                                  for i in range(20000)]}}
    raw = json.dumps(node).encode()
    assert 1.5 * 1024 * 1024 < len(raw) < 3 * 1024 * 1024
    code, status = client.req("POST", "/api/v1/nodes", raw=raw)
    assert code == 500, status
    assert status["message"] == "etcdserver: request is too large"
    assert client.req("GET", "/api/v1/nodes/huge")[0] == 404  # nothing stored
    _healthy(client)


def test_json_patch_copy_amplification_is_refused(client: Client) -> None:
    client.create(CMS, _cm("amp", a="x" * 200_000))
    # each copy doubles nothing but adds the 200 KB value again: 19 copies = 3.8 MB > 3 MiB
    ops = [{"op": "copy", "from": "/data/a", "path": f"/data/c{i}"} for i in range(19)]
    code, status = client.req("PATCH", f"{CMS}/amp", ops, ctype="application/json-patch+json")
    assert code == 422, status
    cause = status["details"]["causes"][0]["message"]
    assert cause.startswith("Unable to complete the copy, the accumulated size increase of copy is ")
    assert cause.endswith(", exceeding the limit 3145728")
    got = client.get(f"{CMS}/amp")
    assert list(got["data"]) == ["a"]  # nothing applied
    # a few copies within the limit still work
    ok = [{"op": "copy", "from": "/data/a", "path": "/data/b"}]
    code, _ = client.req("PATCH", f"{CMS}/amp", ok, ctype="application/json-patch+json")
    assert code == 200
    _healthy(client)


def test_json_patch_operation_count_is_limited(client: Client) -> None:
    client.create(CMS, _cm("ops", a="1"))
    ops = [{"op": "test", "path": "/data/a", "value": "1"}] * 10001
    code, status = client.req("PATCH", f"{CMS}/ops", ops, ctype="application/json-patch+json")
    assert code == 413, status
    assert status["message"] == ("Request entity too large: The allowed maximum operations in a JSON patch is "
                                 "10000, got 10001")


BOMB = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: bomb}
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_yaml_alias_bomb_is_refused_before_it_expands(client: Client) -> None:
    t0 = time.monotonic()
    code, status = client.req("POST", CMS, raw=BOMB, ctype="application/yaml")
    assert code == 400, status
    assert status["message"].endswith("yaml: document contains excessive aliasing")
    assert time.monotonic() - t0 < 10  # refused, not expanded to ~10^8 nodes
    _healthy(client)


def test_deeply_nested_yaml_is_a_bad_request(client: Client) -> None:
    deep = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: " + b"[" * 20000 + b"]" * 20000
    code, status = client.req("POST", CMS, raw=deep, ctype="application/yaml")
    assert code == 400, status
    _healthy(client)


def test_requests_beyond_the_inflight_limits_get_429(tmp_path) -> None:
    """``--max-mutating-requests-inflight`` / ``--max-requests-inflight`` (``filters/maxinflight.go``):
    past the limit a request is answered 429 "Too many requests, please try again later." with
    ``Retry-After: 1`` at once; watches and health checks are not counted; slots free up again."""
    import threading

    from kubesched.apiserver.launcher import run_server

    with run_server(tmp_path / "kc", max_requests_inflight=1, max_mutating_requests_inflight=1) as srv:
        client = Client.of(srv)
        watch = client.watch(f"{CMS}?watch=true")  # long-running: takes no slot
        srv.server.faults.latency = 1.5  # hold requests inside the server
        results: dict[str, tuple[int, object]] = {}

        def slow(name: str, method: str, body: object = None) -> None:
            results[name] = client.req(method, CMS, body)

        held = [threading.Thread(target=slow, args=("write", "POST", _cm("held", k="v"))),
                threading.Thread(target=slow, args=("read", "GET"))]
        for t in held:
            t.start()
        time.sleep(0.5)
        code, status = client.req("POST", CMS, _cm("extra", k="v"))
        assert code == 429, status
        assert status["message"] == "Too many requests, please try again later."
        assert status["details"]["retryAfterSeconds"] == 1
        assert client.req("GET", CMS)[0] == 429
        assert client.req("GET", "/healthz")[0] == 200
        for t in held:
            t.join()
        assert results["write"][0] == 201 and results["read"][0] == 200
        srv.server.faults.latency = 0.0
        assert client.req("POST", CMS, _cm("later", k="v"))[0] == 201
        watch.close()


def test_a_connection_trickling_its_headers_is_closed(tmp_path) -> None:
    """kube-apiserver bounds how long a connection may take to send its request headers
    (ReadHeaderTimeout) and stay idle (IdleTimeout 90 s): a client that never finishes its first
    request cannot hold a descriptor forever. Here the bound is shortened to 1 s."""
    import socket
    import ssl

    from kubesched.apiserver.launcher import run_server

    with run_server(tmp_path / "kc", idle_timeout=1.0) as srv:
        host, port = srv.url.split("//", 1)[1].split(":")
        ctx = srv.ssl_context()
        raw = socket.create_connection((host, int(port)), timeout=10)
        conn = ctx.wrap_socket(raw, server_hostname=host)
        conn.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        t0 = time.monotonic()
        closed = False
        while time.monotonic() - t0 < 8:
            conn.sendall(b"X-Slow: 1\r\n")
            try:
                conn.settimeout(0.5)
                if conn.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except (ConnectionError, ssl.SSLError, OSError):
                closed = True
                break
        conn.close()
        assert closed, "the server kept a trickling connection open"
        assert time.monotonic() - t0 < 5
        assert Client.of(srv).req("GET", "/healthz")[0] == 200
