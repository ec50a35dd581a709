"""The ``.status`` kube-controller-manager's workload controllers write, as pure functions.

The box's workload controllers (:mod:`kubesched.apiserver.workloadcontrollers`) call
:func:`workload_statuses` after each pass and store what changed, so ``kubectl get deploy``
shows ``3/3``, ``kubectl rollout status`` returns and ``kubectl wait --for=condition=Available``
/ ``--for=condition=Complete`` work. Upstream sources (``k8s.io/kubernetes@v1.37.2``):

- ReplicaSet / ReplicationController: ``pkg/controller/replicaset/replica_set_utils.go:96``
  ``calculateStatus`` — ``replicas`` (active pods), ``fullyLabeledReplicas``, ``readyReplicas``,
  ``availableReplicas`` (Ready for ``minReadySeconds``), ``terminatingReplicas`` (gate
  DeploymentReplicaSetTerminatingReplicas, ReplicaSets only), ``observedGeneration``.
- Deployment: ``pkg/controller/deployment/sync.go`` ``calculateStatus`` (sums over its
  ReplicaSets; ``Available`` condition ``MinimumReplicasAvailable`` when ``availableReplicas >=
  replicas - maxUnavailable``) and ``progress.go`` ``syncRolloutStatus`` (``Progressing``:
  ``NewReplicaSetCreated``, ``ReplicaSetUpdated`` while counts move, ``NewReplicaSetAvailable``
  once complete, ``False``/``ProgressDeadlineExceeded`` after ``progressDeadlineSeconds`` without
  progress as ``deployment_util.go`` ``DeploymentTimedOut``), conditions set as
  ``deploymentutil.SetDeploymentCondition`` (same status and reason: unchanged; otherwise moved
  last, transition time kept while the status holds).
- StatefulSet: ``pkg/controller/statefulset/stateful_set_control.go`` ``computeReplicaStatus``
  (``replicas``, ``readyReplicas``, ``availableReplicas``, ``currentReplicas``/``updatedReplicas``
  by the pods' ``controller-revision-hash``, ``currentRevision``/``updateRevision``; upstream's
  ``collisionCount: 0`` is not written, as the box's revision hash reads it).
- DaemonSet: ``pkg/controller/daemon/daemon_controller.go`` ``updateDaemonSetStatus``
  (``desiredNumberScheduled``, ``currentNumberScheduled``, ``numberReady``, ``numberAvailable``,
  ``updatedNumberScheduled``, ``numberUnavailable``, ``numberMisscheduled``).
- Job: ``pkg/controller/job/job_controller.go`` (``startTime``, ``active``, ``ready``,
  ``terminating``, ``succeeded``, ``failed``, ``uncountedTerminatedPods: {}``,
  ``completedIndexes``; once the completions are reached the interim ``SuccessCriteriaMet``
  condition then ``Complete``, reason ``CompletionsReached`` (job_controller.go:1215, :1420),
  and ``completionTime``).

Simplifications: no ReplicaFailure condition; a DaemonSet's desired count is the nodes its controller made pods for.

Zero counts are omitted where the Go field is ``omitempty``, as the API server serves them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from kubesched.controllers.deployments import max_unavailable, template_key
from kubesched.controllers.successpolicy import REASON_SUCCESS_POLICY, match_success_policy

__all__ = ["POD_COMPLETE_REASON", "is_pod_available", "max_unavailable", "workload_statuses"]

POD_COMPLETE_REASON = "CompletionsReached"


def _map(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _meta(o: Mapping[str, Any]) -> dict[str, Any]:
    return _map(o.get("metadata"))


def _int(v: Any, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _ts(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(ts: Any) -> datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _controller_uid(o: Mapping[str, Any]) -> str | None:
    for ref in _list(_meta(o).get("ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return None


def _terminal(pod: Mapping[str, Any]) -> bool:
    return _map(pod.get("status")).get("phase") in ("Succeeded", "Failed")


def _active(pod: Mapping[str, Any]) -> bool:
    """``controller.IsPodActive``."""
    return not _terminal(pod) and not _meta(pod).get("deletionTimestamp")


def _ready_condition(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    for c in _list(_map(pod.get("status")).get("conditions")):
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c
    return None


def _ready(pod: Mapping[str, Any]) -> bool:
    """``podutil.IsPodReady``."""
    c = _ready_condition(pod)
    return c is not None and c.get("status") == "True"


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """``podutil.IsPodAvailable``: Ready, for at least ``min_ready_seconds`` (by the Ready
    condition's ``lastTransitionTime``)."""
    if not _ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = _parse((_ready_condition(pod) or {}).get("lastTransitionTime"))
    return since is not None and since + timedelta(seconds=min_ready_seconds) <= now


def _available_at(pod: Mapping[str, Any], min_ready_seconds: int) -> datetime | None:
    """When a Ready pod not yet available becomes available (for a later pass), else None."""
    if min_ready_seconds <= 0 or not _ready(pod):
        return None
    since = _parse((_ready_condition(pod) or {}).get("lastTransitionTime"))
    return since + timedelta(seconds=min_ready_seconds) if since is not None else None


def _labels_match(template_labels: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    return all(labels.get(k) == v for k, v in template_labels.items())


def _put(status: dict[str, Any], key: str, value: int) -> None:
    """An ``omitempty`` int32: only when not zero."""
    if value:
        status[key] = value


class _Ctx:
    """One pass: the time and the earliest moment a later pass must look again."""

    def __init__(self, now: datetime, features: Any) -> None:
        self.now = now
        self.features = features
        self.recheck: datetime | None = None

    def enabled(self, gate: str) -> bool:
        if self.features is None:
            from kubesched.features import default_feature_gate
            return bool(default_feature_gate().enabled(gate))
        return bool(self.features.enabled(gate))

    def note(self, when: datetime | None) -> None:
        if when is not None and when > self.now and (self.recheck is None or when < self.recheck):
            self.recheck = when


# ---- ReplicaSet / ReplicationController -----------------------------------------------------------


def _replica_set_status(rs: Mapping[str, Any], owned: list[Mapping[str, Any]], ctx: _Ctx) -> dict[str, Any]:
    spec = _map(rs.get("spec"))
    min_ready = _int(spec.get("minReadySeconds"))
    template_labels = _map(_meta(_map(spec.get("template"))).get("labels"))
    active = [p for p in owned if _active(p)]
    terminating = [p for p in owned if not _terminal(p) and _meta(p).get("deletionTimestamp")]
    status: dict[str, Any] = {"replicas": len(active)}
    _put(status, "fullyLabeledReplicas", sum(_labels_match(template_labels, _map(_meta(p).get("labels")))
                                             for p in active))
    _put(status, "readyReplicas", sum(_ready(p) for p in active))
    _put(status, "availableReplicas", sum(is_pod_available(p, min_ready, ctx.now) for p in active))
    for p in active:
        ctx.note(_available_at(p, min_ready))
    if rs.get("kind") == "ReplicaSet" and ctx.enabled("DeploymentReplicaSetTerminatingReplicas"):
        status["terminatingReplicas"] = len(terminating)
    _put(status, "observedGeneration", _int(_meta(rs).get("generation")))
    old = _map(rs.get("status"))
    if old.get("conditions"):
        status["conditions"] = copy.deepcopy(old["conditions"])
    return status


# ---- Deployment --------------------------------------------------------------------------------------


def _set_condition(status: dict[str, Any], cond: dict[str, Any]) -> None:
    """``deploymentutil.SetDeploymentCondition``."""
    conds = [c for c in _list(status.get("conditions")) if isinstance(c, dict)]
    cur = next((c for c in conds if c.get("type") == cond["type"]), None)
    if cur is not None and cur.get("status") == cond["status"] and cur.get("reason") == cond["reason"]:
        return
    if cur is not None and cur.get("status") == cond["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime")
    status["conditions"] = [c for c in conds if c.get("type") != cond["type"]] + [cond]


def _deployment_condition(ctype: str, status: str, reason: str, message: str, now: datetime) -> dict[str, Any]:
    t = _ts(now)
    return {"type": ctype, "status": status, "lastUpdateTime": t, "lastTransitionTime": t, "reason": reason,
            "message": message}


def _template_key(template: Mapping[str, Any]) -> str:
    return template_key(template)


def _deployment_status(d: Mapping[str, Any], rss: list[tuple[Mapping[str, Any], dict[str, Any]]],
                       ctx: _Ctx) -> dict[str, Any]:
    spec = _map(d.get("spec"))
    replicas = _int(spec.get("replicas"), 1)
    want = _template_key(_map(spec.get("template")))
    new_rs = next((rs for rs, _ in rss if _template_key(_map(_map(rs.get("spec")).get("template"))) == want), None)
    old = _map(d.get("status"))

    def total(key: str, only: Iterable[dict[str, Any]] | None = None) -> int:
        return sum(_int(st.get(key)) for st in (only if only is not None else (st for _, st in rss)))

    new_st = next((st for rs, st in rss if rs is new_rs), None)
    status: dict[str, Any] = {}
    _put(status, "observedGeneration", _int(_meta(d).get("generation")))
    _put(status, "replicas", total("replicas"))
    _put(status, "updatedReplicas", total("replicas", [new_st] if new_st is not None else []))
    _put(status, "readyReplicas", total("readyReplicas"))
    available = total("availableReplicas")
    _put(status, "availableReplicas", available)
    # sync.go:495: against the sum of the ReplicaSets' spec.replicas
    spec_total = sum(_int(_map(rs.get("spec")).get("replicas"), 1) for rs, _ in rss)
    _put(status, "unavailableReplicas", max(0, spec_total - available))
    if ctx.enabled("DeploymentReplicaSetTerminatingReplicas"):
        status["terminatingReplicas"] = total("terminatingReplicas")
    if "collisionCount" in old:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = copy.deepcopy(old["conditions"])
    now = ctx.now
    progressing = next((c for c in _list(status.get("conditions")) if _map(c).get("type") == "Progressing"), None)
    if progressing is None and new_rs is not None:  # sync.go getNewReplicaSet: NewReplicaSetCreated
        name = _meta(new_rs).get("name")
        _set_condition(status, _deployment_condition("Progressing", "True", "NewReplicaSetCreated",
                                                     f'Created new replica set "{name}"', now))
    # sync.go checkPausedConditions: Progressing Unknown while paused, and once resumed
    if progressing is not None or new_rs is not None:
        cur = next((c for c in _list(status.get("conditions")) if _map(c).get("type") == "Progressing"), None)
        reason = _map(cur).get("reason")
        if reason != "ProgressDeadlineExceeded" and spec.get("progressDeadlineSeconds") != 2**31 - 1:
            if spec.get("paused") is True and reason != "DeploymentPaused":
                _set_condition(status, _deployment_condition("Progressing", "Unknown", "DeploymentPaused",
                                                             "Deployment is paused", now))
            elif spec.get("paused") is not True and reason == "DeploymentPaused":
                _set_condition(status, _deployment_condition("Progressing", "Unknown", "DeploymentResumed",
                                                             "Deployment is resumed", now))
    # sync.go calculateStatus: Available
    if available >= replicas - max_unavailable(d):
        _set_condition(status, _deployment_condition("Available", "True", "MinimumReplicasAvailable",
                                                     "Deployment has minimum availability.", now))
    else:
        _set_condition(status, _deployment_condition("Available", "False", "MinimumReplicasUnavailable",
                                                     "Deployment does not have minimum availability.", now))
    # progress.go syncRolloutStatus (progressDeadlineSeconds defaults to 600: a deadline is set)
    if spec.get("paused") is True or spec.get("progressDeadlineSeconds") == 2**31 - 1:
        return status
    cur = next((c for c in _list(status.get("conditions")) if _map(c).get("type") == "Progressing"), None)
    complete_before = (_int(status.get("replicas")) == _int(status.get("updatedReplicas")) and cur is not None
                       and cur.get("reason") == "NewReplicaSetAvailable")
    if complete_before:
        return status
    rs_name = _meta(new_rs).get("name") if new_rs is not None else None
    if (_int(status.get("updatedReplicas")) == replicas and _int(status.get("replicas")) == replicas
            and available == replicas and _int(status.get("observedGeneration")) >= _int(_meta(d).get("generation"))):
        msg = f'ReplicaSet "{rs_name}" has successfully progressed.' if rs_name else \
            f'Deployment "{_meta(d).get("name")}" has successfully progressed.'
        _set_condition(status, _deployment_condition("Progressing", "True", "NewReplicaSetAvailable", msg, now))
    elif (_int(status.get("updatedReplicas")) > _int(old.get("updatedReplicas"))
          or (_int(status.get("replicas")) - _int(status.get("updatedReplicas")))
          < (_int(old.get("replicas")) - _int(old.get("updatedReplicas")))
          or _int(status.get("readyReplicas")) > _int(old.get("readyReplicas"))
          or available > _int(old.get("availableReplicas"))):
        msg = f'ReplicaSet "{rs_name}" is progressing.' if rs_name else \
            f'Deployment "{_meta(d).get("name")}" is progressing.'
        cond = _deployment_condition("Progressing", "True", "ReplicaSetUpdated", msg, now)
        if cur is not None:
            if cur.get("status") == "True":
                cond["lastTransitionTime"] = cur.get("lastTransitionTime")
            status["conditions"] = [c for c in _list(status.get("conditions")) if _map(c).get("type") != "Progressing"]
        _set_condition(status, cond)
    elif cur is not None and cur.get("reason") != "NewReplicaSetAvailable":
        # deployment_util.go DeploymentTimedOut: no progress for progressDeadlineSeconds since the
        # condition's lastUpdateTime → Progressing False, ProgressDeadlineExceeded (once)
        since = _parse(cur.get("lastUpdateTime"))
        deadline = since + timedelta(seconds=_int(spec.get("progressDeadlineSeconds"), 600)) if since else None
        if cur.get("reason") == "ProgressDeadlineExceeded" or (deadline is not None and deadline < ctx.now):
            msg = f'ReplicaSet "{rs_name}" has timed out progressing.' if rs_name else \
                f'Deployment "{_meta(d).get("name")}" has timed out progressing.'
            _set_condition(status, _deployment_condition("Progressing", "False", "ProgressDeadlineExceeded", msg,
                                                         ctx.now))
        elif deadline is not None:
            ctx.note(deadline + timedelta(milliseconds=10))  # requeueStuckDeployment
    return status


# ---- StatefulSet -------------------------------------------------------------------------------------


def _stateful_set_status(s: Mapping[str, Any], owned: list[Mapping[str, Any]], ctx: _Ctx) -> dict[str, Any]:
    spec = _map(s.get("spec"))
    min_ready = _int(spec.get("minReadySeconds"))
    old = _map(s.get("status"))
    created = [p for p in owned if not _terminal(p)]
    live = [p for p in created if not _meta(p).get("deletionTimestamp")]
    revisions = [str(_map(_meta(p).get("labels")).get("controller-revision-hash") or "") for p in live]
    from kubesched.api.hashing import statefulset_revision_hash

    # the revision of the current template (the controller's ControllerRevision name)
    update_rev = (f"{_meta(s).get('name')}-"
                  f"{statefulset_revision_hash(_map(spec.get('template')), old.get('collisionCount'))}")
    status: dict[str, Any] = {}
    _put(status, "observedGeneration", _int(_meta(s).get("generation")))
    status["replicas"] = len(created)
    _put(status, "readyReplicas", sum(_ready(p) for p in created))
    updated = sum(r == update_rev for r in revisions) if update_rev else 0
    # all pods at the update revision: the rolling update is complete, current = update
    current_rev = update_rev if updated == len(live) else str(old.get("currentRevision") or update_rev)
    _put(status, "currentReplicas", sum(r == current_rev for r in revisions) if current_rev else 0)
    _put(status, "updatedReplicas", updated)
    if current_rev:
        status["currentRevision"] = current_rev
    if update_rev:
        status["updateRevision"] = update_rev
    # updateStatefulSetStatus writes getStatefulSetRevisions' collisionCount (0 unless a collision)
    status["collisionCount"] = old.get("collisionCount", 0)
    status["availableReplicas"] = sum(is_pod_available(p, min_ready, ctx.now) for p in created)
    for p in created:
        ctx.note(_available_at(p, min_ready))
    return status


# ---- DaemonSet ---------------------------------------------------------------------------------------


def _daemon_set_status(ds: Mapping[str, Any], owned: list[Mapping[str, Any]], ctx: _Ctx) -> dict[str, Any]:
    spec = _map(ds.get("spec"))
    min_ready = _int(spec.get("minReadySeconds"))
    old = _map(ds.get("status"))
    live = [p for p in owned if _active(p)]
    desired = len({_daemon_node(p) for p in live} - {""})
    scheduled = [p for p in live if _map(p.get("spec")).get("nodeName")]
    available = sum(is_pod_available(p, min_ready, ctx.now) for p in scheduled)
    for p in scheduled:
        ctx.note(_available_at(p, min_ready))
    status: dict[str, Any] = {"currentNumberScheduled": len(scheduled), "numberMisscheduled": 0,
                              "desiredNumberScheduled": desired, "numberReady": sum(_ready(p) for p in scheduled)}
    _put(status, "observedGeneration", _int(_meta(ds).get("generation")))
    from kubesched.api.hashing import compute_hash

    h = compute_hash(_map(spec.get("template")), old.get("collisionCount"))
    gen = _map(_meta(ds).get("annotations")).get("deprecated.daemonset.template.generation")
    _put(status, "updatedNumberScheduled", sum(  # IsPodUpdated
        _map(_meta(p).get("labels")).get("controller-revision-hash") == h
        or (gen is not None and _map(_meta(p).get("labels")).get("pod-template-generation") == str(gen))
        for p in scheduled))
    _put(status, "numberAvailable", available)
    _put(status, "numberUnavailable", max(0, desired - available))
    if "collisionCount" in old:
        status["collisionCount"] = old["collisionCount"]
    return status


def _daemon_node(pod: Mapping[str, Any]) -> str:
    """The node a daemon pod is for: its ``spec.nodeName`` or the ``metadata.name`` In term of its
    required node affinity (``util.ReplaceDaemonSetPodNodeNameNodeAffinity``)."""
    spec = _map(pod.get("spec"))
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    node_affinity = _map(_map(spec.get("affinity")).get("nodeAffinity"))
    req = _map(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in _list(req.get("nodeSelectorTerms")):
        for f in _list(_map(term).get("matchFields")):
            if _map(f).get("key") == "metadata.name" and _list(_map(f).get("values")):
                return str(_map(f)["values"][0])
    return ""


# ---- Job ---------------------------------------------------------------------------------------------


def _index_ranges(indexes: Iterable[int]) -> str:
    """``0,1,3-5`` (job ``completedIndexes``)."""
    out: list[str] = []
    xs = sorted(set(indexes))
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        # indexed_job_utils.go:165 orderedIntervals.String: a pair is "a,b", a longer run "a-b"
        out.append(str(xs[i]) if i == j else f"{xs[i]}{',' if xs[j] == xs[i] + 1 else '-'}{xs[j]}")
        i = j + 1
    return ",".join(out)


def _job_condition(ctype: str, now: datetime, reason: str = POD_COMPLETE_REASON,
                   message: str = "Reached expected number of succeeded pods") -> dict[str, Any]:
    t = _ts(now)
    return {"type": ctype, "status": "True", "lastProbeTime": t, "lastTransitionTime": t,
            "reason": reason, "message": message}


def _job_status(job: Mapping[str, Any], owned: list[Mapping[str, Any]], ctx: _Ctx) -> dict[str, Any]:
    spec = _map(job.get("spec"))
    old = _map(job.get("status"))
    status: dict[str, Any] = copy.deepcopy(old)
    conds = [c for c in _list(old.get("conditions")) if isinstance(c, dict)]
    if any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conds):
        return status  # finished: the controller leaves it
    if spec.get("suspend") is True:
        return status
    if not status.get("startTime"):
        status["startTime"] = _ts(ctx.now)
    active = [p for p in owned if _active(p)]
    terminating = [p for p in owned if not _terminal(p) and _meta(p).get("deletionTimestamp")]
    succeeded_pods = [p for p in owned if _map(p.get("status")).get("phase") == "Succeeded"]
    failed = sum(_map(p.get("status")).get("phase") == "Failed" for p in owned)
    completions = spec.get("completions") if isinstance(spec.get("completions"), int) else None
    done: set[int] = set()
    if spec.get("completionMode") == "Indexed":
        done = {int(x) for p in succeeded_pods
                if str(x := _map(_meta(p).get("annotations")).get("batch.kubernetes.io/job-completion-index",
                                                                   "")).isdigit()
                and (completions is None or int(x) < completions)}
        succeeded = len(done)
        if done:
            status["completedIndexes"] = _index_ranges(done)
    else:
        succeeded = max(len(succeeded_pods), _int(old.get("succeeded")))
    counts = (("active", len(active)), ("succeeded", succeeded), ("failed", max(failed, _int(old.get("failed")))))
    for key, value in counts:
        if value:
            status[key] = value
        else:
            status.pop(key, None)
    status["terminating"] = len(terminating)
    status["uncountedTerminatedPods"] = {}
    status["ready"] = sum(_ready(p) for p in active)
    # job_controller.go syncJob: a SuccessCriteriaMet of an earlier pass stands (no failure checks)
    met = next((c for c in conds if c.get("type") == "SuccessCriteriaMet" and c.get("status") == "True"), None)
    if met is None and _int(status.get("failed")) > _int(spec.get("backoffLimit"), 6):
        # job_controller.go syncJob: exceedsBackoffLimit → FailureTarget, then Failed once no pod runs
        why = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        if not any(c.get("type") == "FailureTarget" for c in conds):
            conds.append(_job_condition("FailureTarget", ctx.now, *why))
        if not active and not terminating:
            conds.append(_job_condition("Failed", ctx.now, *why))
        status["conditions"] = conds
        return status
    if met is None and spec.get("completionMode") == "Indexed" and completions is not None and \
            (msg := match_success_policy(_map(spec.get("successPolicy")), completions, done)) is not None:
        met = _job_condition("SuccessCriteriaMet", ctx.now, REASON_SUCCESS_POLICY, msg)  # success_policy.go
        conds.append(met)
    # completions unset: done once one pod succeeded and none runs (job_controller.go syncJob)
    finished = met is not None or (succeeded >= completions if completions is not None
                                   else (succeeded > 0 and not active))
    if finished:
        # job_controller.go:1420: the interim SuccessCriteriaMet, then Complete (its reason and
        # message) once no pod runs
        if met is None:
            met = _job_condition("SuccessCriteriaMet", ctx.now)
            conds.append(met)
        if not active and not terminating:
            conds.append(_job_condition("Complete", ctx.now, str(met.get("reason")), str(met.get("message"))))
            status["completionTime"] = _ts(ctx.now)
        status["conditions"] = conds
    return status


# ---- all workloads -----------------------------------------------------------------------------------


def workload_statuses(workloads: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]], *,
                      now: datetime | None = None, features: Any = None
                      ) -> tuple[list[tuple[Mapping[str, Any], dict[str, Any]]], datetime | None]:
    """``(workload, new status)`` for every Deployment, ReplicaSet, ReplicationController,
    StatefulSet, DaemonSet and Job whose status would change, and the time a later pass must
    look again (a Ready pod becoming available after ``minReadySeconds``), or None.

    ``pods``: every pod (owned ones are matched by their controller ownerReference's uid);
    ``features``: a FeatureGate (None: v1.37 defaults)."""
    ctx = _Ctx(now or datetime.now(UTC), features)
    workloads = [w for w in workloads if isinstance(w, Mapping)]
    by_owner: dict[str, list[Mapping[str, Any]]] = {}
    for p in pods:
        uid = _controller_uid(p)
        if uid:
            by_owner.setdefault(uid, []).append(p)
    out: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
    rs_status: dict[str, tuple[Mapping[str, Any], dict[str, Any]]] = {}
    for w in workloads:
        uid = str(_meta(w).get("uid") or "")
        kind = w.get("kind")
        owned = by_owner.get(uid, []) if uid else []
        if kind in ("ReplicaSet", "ReplicationController"):
            st = _replica_set_status(w, owned, ctx)
            if kind == "ReplicaSet":
                rs_status[uid] = (w, st)
        elif kind == "StatefulSet":
            st = _stateful_set_status(w, owned, ctx)
        elif kind == "DaemonSet":
            st = _daemon_set_status(w, owned, ctx)
        elif kind == "Job":
            st = _job_status(w, owned, ctx)
        else:
            continue
        if st != _map(w.get("status")):
            out.append((w, st))
    rs_by_owner: dict[str, list[tuple[Mapping[str, Any], dict[str, Any]]]] = {}
    for rs, st in rs_status.values():
        owner = _controller_uid(rs)
        if owner:
            rs_by_owner.setdefault(owner, []).append((rs, st))
    for w in workloads:
        if w.get("kind") != "Deployment":
            continue
        uid = str(_meta(w).get("uid") or "")
        st = _deployment_status(w, rs_by_owner.get(uid, []) if uid else [], ctx)
        if _comparable(st) != _comparable(_map(w.get("status"))):
            out.append((w, st))
    return out, ctx.recheck


def _comparable(status: Mapping[str, Any]) -> Any:
    """A Deployment status without condition times (a rewrite only for a real change)."""
    s = dict(status)
    s["conditions"] = [{k: v for k, v in _map(c).items() if k not in ("lastUpdateTime", "lastTransitionTime")}
                       for c in _list(status.get("conditions"))]
    return s
