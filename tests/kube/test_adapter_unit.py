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


def test_klog_direct_line_equals_the_logging_line() -> None:
    """While the text handler is the root's only one, kv_log writes its line without a LogRecord;
    with another handler present (a test capturing logs) the line goes through logging. Both give
    the same line, caller file:line included (timestamps aside)."""
    buf = io.StringIO()
    configure_logging("text", 2, buf)
    lg = logging.getLogger("kubesched.test.direct")
    other = logging.NullHandler()
    try:
        for with_other in (False, True):
            if with_other:
                logging.getLogger().addHandler(other)
            kv_log(lg, 2, 'Successfully "bound"', pod="ns/p", node="n1", evaluatedNodes=3, ok=True, gone=None)
            kv_log(lg, 0, "Error scheduling pod; retrying", pod="ns/p", err="a\nb", error=True)
    finally:
        logging.getLogger().removeHandler(other)
        logging.getLogger().handlers.clear()
    lines = buf.getvalue().splitlines()
    assert len(lines) == 4
    strip = [line[0] + line[line.index(".") + 7:] for line in lines]  # level char, then from the pid on
    assert strip[0] == strip[2] and strip[1] == strip[3]
    assert strip[0].startswith("I") and strip[1].startswith("E") and "test_adapter_unit.py:" in strip[0]
    assert strip[0].endswith('] "Successfully \\"bound\\"" pod="ns/p" node="n1" evaluatedNodes=3 ok=true gone=<nil>')


class _PatchAnswers:
    """An APIClient that applies a PodGroup status patch's conditions (merged by type) and answers
    the PodGroup with the next resourceVersion."""

    def __init__(self, rv: int) -> None:
        self.rv = rv
        self.conditions: dict[str, dict] = {}
        self.bodies: list[dict] = []
        self.paths: list[str] = []

    async def patch(self, path: str, body: dict) -> dict:
        self.paths.append(path)
        self.bodies.append(body)
        for c in body["status"]["conditions"]:
            self.conditions[c["type"]] = {**self.conditions.get(c["type"], {}), **c}
        self.rv += 1
        return _pg(str(self.rv), list(self.conditions.values()))


def _pg(rv: str, conditions: list[dict] | None = None) -> dict:
    return {"metadata": {"namespace": "ns", "name": "pg", "resourceVersion": rv},
            "status": {"conditions": conditions or []}}


_TRUE = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": ""}
_FALSE = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}


def test_pod_group_condition_patch_starts_from_the_status_this_client_wrote() -> None:
    """upstream updatePodGroupCondition (schedule_one_podgroup.go L942-964) never regresses a True
    condition to False; its informer holds the True it patched before the retry of the group's
    leftover members reads it. No cycle waits here: a later patch of the same PodGroup whose
    cycle read an older copy is computed against the object the server answered the first with
    (so the retry's False is dropped), until the informer delivers that version or a later one."""
    from kubesched.kube.adapter import LiveClusterClient

    async def scenario() -> dict[str, object]:
        api = _PatchAnswers(10)
        live = LiveClusterClient(api)  # type: ignore[arg-type]
        stale = _pg("10")
        live.patch_pod_group_condition(stale, _TRUE)
        live.patch_pod_group_condition(stale, _FALSE)  # the retry read the copy from before the True
        await live.writer.flush(1.0)
        out: dict[str, object] = {"first": list(api.bodies), "written": dict(live.pod_group_written)}
        live.pod_group_write_observed(_pg("10"))  # an older event: the answer stays the base
        out["older"] = "ns/pg" in live.pod_group_written
        live.pod_group_write_observed(_pg("11", list(api.conditions.values())))
        out["forgotten"] = live.pod_group_written == {}
        # a newer copy from the informer (the condition removed by someone else) beats the answer
        live.pod_group_written["ns/pg"] = _pg("11", [dict(_TRUE)])
        live.patch_pod_group_condition(_pg("15"), _FALSE)
        await live.writer.flush(1.0)
        out["newer"] = api.bodies[1:]
        live.pod_group_deleted(_pg("16"))
        out["deleted"] = live.pod_group_written
        # no write of ours outstanding and nothing to change: no request, no writer task
        quiet = LiveClusterClient(_PatchAnswers(20))  # type: ignore[arg-type]
        quiet.patch_pod_group_condition(_pg("20", [dict(_TRUE, lastTransitionTime="t", observedGeneration=0)]),
                                        _FALSE)
        out["quiet"] = (quiet.writer.pending, quiet.client.paths)  # type: ignore[attr-defined]
        out["paths"] = api.paths
        return out

    out = asyncio.run(scenario())
    first = out["first"]
    assert isinstance(first, list) and len(first) == 1
    assert first[0]["status"]["conditions"][0]["status"] == "True"
    assert list(out["written"]) == ["ns/pg"] and out["older"] is True and out["forgotten"] is True
    newer = out["newer"]
    assert isinstance(newer, list) and len(newer) == 1
    assert newer[0]["status"]["conditions"][0]["status"] == "False"
    assert out["deleted"] == {} and out["quiet"] == (0, [])
    assert out["paths"] == ["/apis/scheduling.k8s.io/v1beta1/namespaces/ns/podgroups/pg/status"] * 2


def test_a_failed_pod_group_patch_leaves_the_next_one_on_the_cycles_copy() -> None:
    """A patch the server refused (403: not retried) leaves nothing written: the next patch of the
    group is computed from the cycle's copy again, and both are sent."""
    from kubesched.kube.adapter import LiveClusterClient
    from kubesched.kube.client import APIError

    class Refusing(_PatchAnswers):
        async def patch(self, path: str, body: dict) -> dict:
            if not self.bodies:
                self.bodies.append(body)
                raise APIError(403, "Forbidden", "no")
            return await super().patch(path, body)

    async def scenario() -> tuple[list[dict], dict, int]:
        api = Refusing(10)
        live = LiveClusterClient(api)  # type: ignore[arg-type]
        live.patch_pod_group_condition(_pg("10"), _TRUE)
        live.patch_pod_group_condition(_pg("10"), _FALSE)
        await live.writer.flush(1.0)
        return api.bodies, live.pod_group_written, live.writer.failed

    bodies, written, failed = asyncio.run(scenario())
    assert [b["status"]["conditions"][0]["status"] for b in bodies] == ["True", "False"]
    assert failed == 1 and written["ns/pg"]["metadata"]["resourceVersion"] == "11"


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
