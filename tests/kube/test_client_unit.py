"""Pure parts of ``kubesched.kube.client``: the token bucket, config loading, user agent."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.errors import KubeschedError
from kubesched.kube.client import APIError, TokenBucket, load_config, user_agent


class FakeTime:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_token_bucket_burst_then_qps() -> None:
    clock = FakeTime()
    tb = TokenBucket(50, 100, clock)
    # a full bucket: 100 requests pass at once
    assert all(tb.reserve() == 0.0 for _ in range(100))
    # the 101st waits one token interval (1/50 s), the 102nd two intervals: reservations queue up
    assert tb.reserve() == pytest.approx(0.02)
    assert tb.reserve() == pytest.approx(0.04)
    # after one second 50 tokens came back, minus the 2 reserved ones
    clock.t += 1.0
    assert sum(1 for _ in range(48) if tb.reserve() == 0.0) == 48
    assert tb.reserve() > 0


def test_token_bucket_refill_capped_at_burst() -> None:
    clock = FakeTime()
    tb = TokenBucket(10, 5, clock)
    clock.t += 3600
    assert [tb.reserve() for _ in range(5)] == [0.0] * 5
    assert tb.reserve() == pytest.approx(0.1)


@pytest.mark.parametrize("qps", [0, -1, float("inf")])
def test_token_bucket_unlimited(qps: float) -> None:
    tb = TokenBucket(qps, 1, FakeTime())
    assert tb.unlimited
    assert all(tb.reserve() == 0.0 for _ in range(10_000))


@given(qps=st.sampled_from([0.5, 10.0, 50.0, 5000.0]), burst=st.integers(1, 8),
       ops=st.lists(st.one_of(st.just("allow"), st.just("reserve"), st.floats(0.0, 2.0)), max_size=60))
def test_token_bucket_allow_is_a_reserve_that_need_not_wait(qps: float, burst: int, ops: list[object]) -> None:
    """``allow()`` (the event recorder's POST without a coroutine) takes a token exactly when
    ``reserve()`` would return 0 (no wait, no waiter ahead), and leaves the bucket as it was when
    it does not: the same sequence with each allow replaced by "reserve, undone if it would wait"."""
    clock = FakeTime()
    tb, ref = TokenBucket(qps, burst, clock), TokenBucket(qps, burst, clock)
    for op in ops:
        if op == "allow":
            before = copy.copy(ref.__dict__)
            expected = ref.reserve() == 0.0
            if not expected:
                ref.__dict__.update(before)
            assert tb.allow() is expected
        elif op == "reserve":
            assert tb.reserve() == pytest.approx(ref.reserve())
        else:
            assert isinstance(op, float)
            clock.t += op
    assert tb.reserve() == pytest.approx(ref.reserve())


def test_token_bucket_allow_when_unlimited() -> None:
    tb = TokenBucket(-1, 0, FakeTime())
    assert all(tb.allow() for _ in range(1000))


def test_user_agent() -> None:
    ua = user_agent("/scheduler")
    assert ua.startswith("kubesched/v")
    assert ua.endswith(")/scheduler")
    assert " (" in ua and "/" in ua.split(" (")[1]


def test_load_config_kubeconfig_and_master_override(tmp_path) -> None:
    kc = tmp_path / "kubeconfig"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters:\n- name: k\n  cluster:\n    server: http://127.0.0.1:8080/\n"
        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n    namespace: team\n"
        "users:\n- name: u\n  user:\n    token: abc\n")
    cfg = load_config(str(kc), qps=5, burst=7)
    assert cfg.server == "http://127.0.0.1:8080"
    assert cfg.user.token == "abc"
    assert (cfg.qps, cfg.burst, cfg.namespace) == (5, 7, "team")
    assert load_config(str(kc), "http://10.0.0.1:6443").server == "http://10.0.0.1:6443"


def test_load_config_errors(tmp_path, monkeypatch) -> None:
    with pytest.raises(KubeschedError, match="not found"):
        load_config(str(tmp_path / "missing"))
    bad = tmp_path / "bad"
    bad.write_text("clusters: 3\n")
    with pytest.raises(KubeschedError, match="kubeconfig"):
        load_config(str(bad))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(KubeschedError, match="no configuration has been provided"):
        load_config()


def test_api_error_classification() -> None:
    e = APIError.from_status({"kind": "Status", "code": 410, "reason": "Expired",
                              "message": "too old resource version: 1 (5)"})
    assert e.is_expired and e.status == 410
    assert APIError.from_status({"reason": "Gone", "code": 410}).is_expired
    tl = APIError(504, "Timeout", "x", {"details": {"causes": [{"reason": "ResourceVersionTooLarge"}]}})
    assert tl.is_too_large_resource_version and not tl.is_expired


@pytest.mark.parametrize("server", ["https://127.0.0.1:6443", "https://h.example:8443/k8s/clusters/c-1"])
def test_request_url_keeps_the_server_prefix_and_encodes_what_needs_it(server: str) -> None:
    """client-go ``rest.Request.URL``: the server URL's path is the prefix of every API path; a
    path with characters outside RFC 3986 ``pchar`` is percent-encoded, an encoded one sent as is."""
    from kubesched.kube.client import APIClient

    c = APIClient.for_server(server)
    plain = "/api/v1/namespaces/e2e/pods/pod-1.a_b~c/binding"
    assert str(c._url(plain)) == server + plain
    odd = "/api/v1/namespaces/a b/pods/ü%"
    assert str(c._url(odd)) == server + odd
    from yarl import URL

    assert URL(c._url(odd)).raw_path == URL(server).raw_path.rstrip("/") + "/api/v1/namespaces/a%20b/pods/%C3%BC%25"
