"""Pure parts of the live adapter: status patches (upstream updatePod / PatchPodStatus), the
retry policy, klog formatting."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import msgspec
import pytest

from kubesched.api.objects import Pod
from kubesched.kube.adapter import pod_status_patch, retry_on_error
from kubesched.kube.client import APIConnectionError, APIError
from kubesched.kube.klog import configure_logging, kv_log


def mk(conds: list[dict] | None = None, nominated: str = "") -> Pod:
    return msgspec.convert({"metadata": {"name": "p", "namespace": "ns"},
                            "status": {"conditions": conds or [], "nominatedNodeName": nominated}}, Pod)


NOW = "2026-11-24T08:00:00Z"


def test_new_condition_full_element_with_set_element_order() -> None:
    pod = mk([{"type": "Initialized", "status": "True"}])
    patch = pod_status_patch(pod, {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                   "message": "0/3 nodes are available"}, None, NOW)
    assert patch == {"status": {
        "$setElementOrder/conditions": [{"type": "Initialized"}, {"type": "PodScheduled"}],
        "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                        "lastTransitionTime": NOW, "reason": "Unschedulable",
                        "message": "0/3 nodes are available"}]}}


def test_same_condition_is_no_patch_and_message_change_keeps_transition_time() -> None:
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m1"}
    pod = mk([cond])
    assert pod_status_patch(pod, cond, None, NOW) is None
    patch = pod_status_patch(pod, {**cond, "message": "m2"}, None, NOW)
    assert patch == {"status": {"$setElementOrder/conditions": [{"type": "PodScheduled"}],
                                "conditions": [{"type": "PodScheduled", "message": "m2"}]}}
    flipped = pod_status_patch(pod, {"type": "PodScheduled", "status": "True"}, None, NOW)
    assert flipped is not None
    assert flipped["status"]["conditions"] == [{"type": "PodScheduled", "status": "True", "lastTransitionTime": NOW,
                                                "reason": None, "message": None}]


def test_observed_generation_as_upstream_update_pod() -> None:
    """v1.34 (PodObservedGenerationTracking, beta, on): the PodScheduled condition carries the
    pod's metadata.generation; a patch is sent only when UpdatePodCondition sees a change, and
    then the element carries the generation if it moved."""
    gen3 = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m1",
            "observedGeneration": 3}
    new = pod_status_patch(mk(), gen3, None, NOW)
    assert new is not None and new["status"]["conditions"][0]["observedGeneration"] == 3
    pod = mk([{**gen3, "observedGeneration": 2}])
    assert pod_status_patch(pod, gen3, None, NOW) is None  # only the generation differs: no patch
    patch = pod_status_patch(pod, {**gen3, "message": "m2"}, None, NOW)
    assert patch is not None
    assert patch["status"]["conditions"] == [{"type": "PodScheduled", "message": "m2", "observedGeneration": 3}]
    unset = pod_status_patch(mk(), {**gen3, "observedGeneration": 0}, None, NOW)
    assert unset is not None and "observedGeneration" not in unset["status"]["conditions"][0]


def test_nominated_node_name_override_and_clear() -> None:
    pod = mk(nominated="n1")
    assert pod_status_patch(pod, None, "n1") is None
    assert pod_status_patch(pod, None, "n2") == {"status": {"nominatedNodeName": "n2"}}
    assert pod_status_patch(pod, None, "") == {"status": {"nominatedNodeName": None}}
    assert pod_status_patch(mk(), None, "") is None
    assert pod_status_patch(mk(), None, None) is None


def test_retry_on_error_retries_conflict_then_succeeds_but_not_not_found() -> None:
    calls: list[int] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise APIError(409, "Conflict", "the object has been modified")
        return "ok"

    assert asyncio.run(retry_on_error(flaky)) == "ok" and len(calls) == 3

    async def gone() -> None:
        calls.append(2)
        raise APIError(404, "NotFound", "gone")

    calls.clear()
    with pytest.raises(APIError):
        asyncio.run(retry_on_error(gone))
    assert calls == [2]

    async def down() -> None:
        calls.append(3)
        raise APIConnectionError("refused")

    calls.clear()
    with pytest.raises(APIConnectionError):
        asyncio.run(retry_on_error(down))
    assert calls == [3, 3, 3, 3]  # retry.DefaultBackoff: 4 steps


def test_klog_text_and_json() -> None:
    buf = io.StringIO()
    configure_logging("text", 2, buf)
    lg = logging.getLogger("kubesched.test")
    kv_log(lg, 2, "Successfully bound pod to node", pod="ns/p", node="n1", evaluatedNodes=3)
    kv_log(lg, 3, "too verbose")
    line = buf.getvalue().strip()
    assert "\n" not in line
    assert line[0] == "I" and "test_adapter_unit.py:" in line
    assert line.endswith('] "Successfully bound pod to node" pod="ns/p" node="n1" evaluatedNodes=3')
    buf = io.StringIO()
    configure_logging("json", 0, buf)
    kv_log(lg, 0, "Starting Kubernetes Scheduler", version="v0.1.0")
    kv_log(lg, 0, "Error scheduling pod; retrying", pod="ns/p", err="boom", error=True)
    a, b = (json.loads(x) for x in buf.getvalue().splitlines())
    assert a["msg"] == "Starting Kubernetes Scheduler" and a["v"] == 0 and a["version"] == "v0.1.0"
    assert "caller" in a and isinstance(a["ts"], float)
    assert b["err"] == "boom" and "v" not in b
    logging.getLogger().handlers.clear()


class _PatchAnswers:
    """An APIClient whose PATCH answers the PodGroup with the given resourceVersion."""

    def __init__(self, rv: str) -> None:
        self.rv = rv
        self.paths: list[str] = []

    async def patch(self, path: str, body: object) -> dict:
        self.paths.append(path)
        return {"metadata": {"namespace": "ns", "name": "pg", "resourceVersion": self.rv}}


def _pg(rv: str) -> dict:
    return {"metadata": {"namespace": "ns", "name": "pg", "resourceVersion": rv}, "status": {}}


def test_pod_group_condition_patch_is_settled_once_the_informer_delivers_it() -> None:
    """upstream updatePodGroupCondition patches synchronously and its informer holds the new
    status before the next cycle reads it: the scheduling loop waits for the patch's answer and
    for the informer event carrying at least that resourceVersion."""
    from kubesched.kube.adapter import LiveClusterClient

    cond = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": ""}

    async def scenario() -> tuple[object, ...]:
        api = _PatchAnswers("12")
        live = LiveClusterClient(api)  # type: ignore[arg-type]
        live.patch_pod_group_condition(_pg("10"), cond)
        in_flight = dict(live.pod_group_writes)
        await asyncio.sleep(0.01)  # the writer sends it
        answered = dict(live.pod_group_writes)
        live.pod_group_write_observed(_pg("11"))  # an older event: still waiting
        older = dict(live.pod_group_writes)
        live.pod_group_write_observed(_pg("12"))
        t0 = asyncio.get_running_loop().time()
        await live.settle_pod_group_writes(1.0)
        waited = asyncio.get_running_loop().time() - t0
        # a patch that changes nothing on the server (answer = the cached version): no event comes
        noop = LiveClusterClient(_PatchAnswers("10"))  # type: ignore[arg-type]
        noop.patch_pod_group_condition(_pg("10"), cond)
        t0 = asyncio.get_running_loop().time()
        await noop.settle_pod_group_writes(1.0)
        return (in_flight, answered, older, live.pod_group_writes, waited, api.paths,
                asyncio.get_running_loop().time() - t0)

    in_flight, answered, older, after, waited, paths, noop_waited = asyncio.run(scenario())
    assert in_flight == {"ns/pg": None} and answered == {"ns/pg": 12} and older == {"ns/pg": 12}
    assert after == {} and waited < 0.5 and noop_waited < 0.5
    assert paths == ["/apis/scheduling.k8s.io/v1beta1/namespaces/ns/podgroups/pg/status"]


def test_klog_quoting_matches_go_style_quotes() -> None:
    """Values and messages are quoted as before the fast path (``json.dumps``, non-ASCII kept):
    plain names verbatim in quotes, quotes, backslashes and control characters escaped."""
    from kubesched.kube.klog import _quote

    for s in ["ns/p-1", "", "näme ✓", 'say "hi"', "back\\slash", "tab\there\nnl", "\x00\x1f\x7f", "\u2028"]:
        assert _quote(s) == json.dumps(s, ensure_ascii=False), s
    buf = io.StringIO()
    configure_logging("text", 0, buf)
    kv_log(logging.getLogger("kubesched.test"), 0, 'msg "q"', pod="ns/p", err="a\nb")
    assert buf.getvalue().rstrip("\n").endswith('] "msg \\"q\\"" pod="ns/p" err="a\\nb"')
    logging.getLogger().handlers.clear()
