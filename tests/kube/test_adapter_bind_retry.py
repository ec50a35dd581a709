"""The live binding write over real HTTP against the box, with faults injected: since v1.37
DefaultBinder binds through ``util.BindPod`` (``pkg/scheduler/util/utils.go`` L100-117):
``retry.OnError(retry.DefaultBackoff, Retriable, …)`` — 4 tries, 10 ms × 5 — on InternalError
(500), ServiceUnavailable (503) and connection refused, never on Conflict. v1.34–v1.36 bind once.
Status patches retry Conflict only since v1.36 (``RetriableWithConflict``)."""

from __future__ import annotations

import socket

import pytest
from livehelpers import node_obj, pod_obj

from kubesched.api.objects import Pod, decode
from kubesched.errors import BindError
from kubesched.features import FeatureGate
from kubesched.kube.adapter import LiveClusterClient, _retriable, _retriable_bind, _retriable_no_conflict
from kubesched.kube.client import APIClient, APIConnectionError, APIError, ClientConfig

pytestmark = pytest.mark.asyncio


async def _pod(api: APIClient, name: str) -> Pod:
    await api.create("/api/v1/nodes", node_obj("n1"))
    return decode(Pod, await api.create("/api/v1/namespaces/default/pods", pod_obj(name)))


async def _node_of(api: APIClient, name: str) -> str:
    return (await api.get(f"/api/v1/namespaces/default/pods/{name}"))["spec"].get("nodeName", "")


@pytest.mark.parametrize("code", [503, 500])
async def test_v137_bind_retries_a_server_error_then_binds_once(box, api, code: int) -> None:
    pod = await _pod(api, "p")
    box.faults.fail_writes("pods", subresource="binding", code=code, verbs=("create",), times=1)
    live = LiveClusterClient(api, features=FeatureGate(emulated_version=(1, 37)))
    await live.bind(pod, "n1")  # the first POST fails, the retry binds
    assert box.faults.injected == 1
    assert (live.binds, live.bind_errors) == (1, 0)
    assert await _node_of(api, "p") == "n1"
    # bound exactly once: the server refuses another binding
    with pytest.raises(BindError) as e:
        await live.bind(pod, "n1")
    assert e.value.code == 409


async def test_v137_bind_gives_up_after_four_tries(box, api) -> None:
    pod = await _pod(api, "p")
    box.faults.fail_writes("pods", subresource="binding", code=503, verbs=("create",))
    live = LiveClusterClient(api, features=FeatureGate(emulated_version=(1, 37)))
    with pytest.raises(BindError) as e:
        await live.bind(pod, "n1")
    assert e.value.code == 503 and box.faults.injected == 4  # retry.DefaultBackoff.Steps
    assert (live.binds, live.bind_errors) == (0, 1)
    assert await _node_of(api, "p") == ""


async def test_v137_bind_does_not_retry_a_conflict(box, api) -> None:
    pod = await _pod(api, "p")
    box.faults.fail_writes("pods", subresource="binding", code=409, verbs=("create",), times=1)
    live = LiveClusterClient(api, features=FeatureGate(emulated_version=(1, 37)))
    with pytest.raises(BindError) as e:
        await live.bind(pod, "n1")
    assert e.value.code == 409 and box.faults.injected == 1
    assert await _node_of(api, "p") == ""


@pytest.mark.parametrize("version", [(1, 34), (1, 36)])
async def test_bind_is_not_retried_before_v137(box, api, version: tuple[int, int]) -> None:
    pod = await _pod(api, "p")
    box.faults.fail_writes("pods", subresource="binding", code=503, verbs=("create",), times=1)
    live = LiveClusterClient(api, features=FeatureGate(emulated_version=version))
    with pytest.raises(BindError) as e:
        await live.bind(pod, "n1")
    assert e.value.code == 503 and box.faults.injected == 1
    assert await _node_of(api, "p") == ""


async def test_connection_refused_is_retriable_for_bind() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = APIClient(ClientConfig(server=f"http://127.0.0.1:{port}", qps=-1))
    try:
        with pytest.raises(APIConnectionError) as e:
            await client.bind("default", "p", "uid", "n1")
    finally:
        await client.close()
    assert _retriable_bind(e.value)
    assert not _retriable_bind(APIConnectionError("POST /api/v1/namespaces/default/pods/p/binding: timed out"))


async def test_retry_predicates() -> None:
    conflict = APIError(409, "Conflict", "the object has been modified")
    unavailable = APIError(503, "ServiceUnavailable", "")
    assert _retriable(conflict) and not _retriable_no_conflict(conflict) and not _retriable_bind(conflict)
    assert _retriable(unavailable) and _retriable_no_conflict(unavailable) and _retriable_bind(unavailable)
    assert not _retriable_bind(APIError(404, "NotFound", ""))


@pytest.mark.parametrize(("version", "want"), [((1, 37), "n1"), ((1, 36), "n1"), ((1, 35), "")])
async def test_binding_cycle_nnn_patch_is_awaited_and_conflicts_retried_since_v136(
        box, api, version: tuple[int, int], want: str) -> None:
    """The binding cycle's ``status.nominatedNodeName`` patch (upstream ``updatePod`` →
    ``util.PatchPodStatus``) is done when the call returns, before the binding POST; a 409 is
    retried since v1.36 (``RetriableWithConflict``), not before (the failure is only logged)."""
    pod = await _pod(api, "p")
    box.faults.fail_writes("pods", subresource="status", code=409, verbs=("patch",), times=1)
    live = LiveClusterClient(api, features=FeatureGate(emulated_version=version))
    await live.set_nominated_node_name(pod, "n1")
    got = await api.get("/api/v1/namespaces/default/pods/p")
    assert got["status"].get("nominatedNodeName", "") == want
    assert box.faults.injected == 1
    await live.bind(pod, "n1")
    assert await _node_of(api, "p") == "n1"
