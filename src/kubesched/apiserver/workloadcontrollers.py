"""The box's workload controllers: Deployments, ReplicaSets, ReplicationControllers,
StatefulSets, DaemonSets and Jobs create their pods, as kube-controller-manager's do.

One :class:`WorkloadController` runs the pure controllers of :mod:`kubesched.controllers.workloads`
(the same code ``kubesched simulate`` runs) over the store's current objects whenever a pod,
node, PVC or workload changes (debounced by ``period`` seconds), and writes what they create
through the server's own create path (admission, defaults, validation), as a controller's
POSTs would be. Level-triggered: each pass reads the store afresh, so nothing is created twice
(the store is the controllers' informer cache, with no lag).

After each pass the workloads' ``.status`` is written as upstream's controllers compute it
(:mod:`kubesched.controllers.workloadstatus`: replicas, ready/available/updated counts,
observedGeneration, Deployment ``Available``/``Progressing`` and Job ``Complete`` conditions),
so ``kubectl rollout status`` and ``kubectl wait --for=condition=...`` work.

What they write: the objects the pass creates (through the server's create path), the
ReplicaSets a Deployment scales (rollouts, scale both ways, through the update path), the pods a
ReplicaSet deletes on scale-down and old ReplicaSets beyond ``revisionHistoryLimit`` (DELETE,
Background), the Deployment's ``deployment.kubernetes.io/revision`` annotation, and the Job
controller's removal of its ``batch.kubernetes.io/job-tracking`` finalizer from finished pods, and
StatefulSets'/DaemonSets' ControllerRevisions (:mod:`kubesched.apiserver.history`).

Differences from upstream, on purpose: pods of a ReplicaSet created in a pass are created by the next
pass (the server assigns the ReplicaSet's uid, which the pods' ownerReferences must carry);
Ready comes from the simulated kubelets' ``Ready`` condition. A pass that fails to write (an
invalid template, a fault) is logged and retried on the next change.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.apiserver import resources as served
from kubesched.apiserver.controllers import DebouncedController
from kubesched.apiserver.history import plan_history
from kubesched.apiserver.managers import CONTROLLER_MANAGER, track_write
from kubesched.apiserver.podfailurepolicy import JOB_REASON_POD_FAILURE_POLICY, failure_policy_outcomes
from kubesched.apiserver.storage import Conflict, KeyNotFound
from kubesched.controllers.deployments import REVISION
from kubesched.controllers.workloads import JOB_TRACKING_FINALIZER, Controllers, WorkloadError
from kubesched.controllers.workloadstatus import workload_statuses

if TYPE_CHECKING:
    from kubesched.apiserver.registry import Registry

__all__ = ["WORKLOAD_SPACES", "WorkloadController"]

log = logging.getLogger("kubesched.apiserver.workloads")

#: Store spaces of the workload kinds the controllers read.
WORKLOAD_SPACES = ("apps/deployments", "apps/replicasets", "replicationcontrollers", "apps/statefulsets",
                   "apps/daemonsets", "batch/jobs")
#: the workload API's objects the Job controller reads and writes (WorkloadWithJob)
SCHEDULING_SPACES = ("scheduling.k8s.io/workloads", "scheduling.k8s.io/podgroups")
_REVISIONS = "apps/controllerrevisions"
_SPACES = (*WORKLOAD_SPACES, "pods", "nodes", "persistentvolumeclaims", *SCHEDULING_SPACES, _REVISIONS)
_KIND_SPACE = {"Deployment": "apps/deployments", "ReplicaSet": "apps/replicasets",
               "ReplicationController": "replicationcontrollers", "StatefulSet": "apps/statefulsets",
               "DaemonSet": "apps/daemonsets", "Job": "batch/jobs", "Workload": "scheduling.k8s.io/workloads",
               "PodGroup": "scheduling.k8s.io/podgroups"}


class WorkloadController(DebouncedController):
    """Runs a controller pass after changes; ``passes`` and ``created`` count what it did."""

    spaces = _SPACES

    def __init__(self, server: Registry, period: float = 0.05, seed: int | None = None) -> None:
        super().__init__(server, period)
        self.rng = random.Random(seed)
        self.passes = 0
        self.created = 0
        self.failures = 0
        """Writes that failed in the last pass (retried with backoff)."""
        self._backoff = 0.0

    async def _pass(self) -> None:
        try:
            self.sync_once()
        except Exception:  # keep the controller alive
            log.exception("workload controllers: pass failed")
            self.failures += 1
        if self.failures:
            # failed writes: retry with backoff (the controllers' rate-limited requeue)
            self._backoff = min(5.0, max(0.1, self._backoff * 2))
            await asyncio.sleep(self._backoff)
            self._wake.set()
        else:
            self._backoff = 0.0

    def _controllers(self, workloads: list[dict[str, Any]]) -> Controllers | None:
        """Controllers over the valid workloads (admission validated them; an object written
        around it is skipped with a log line rather than stopping every controller)."""
        while workloads:
            try:
                return Controllers(workloads, seed=self.rng.getrandbits(64), ready_when_bound=False,
                                   features=self.server.features)
            except WorkloadError as e:
                bad = int((e.path or "#0")[1:])
                log.warning("workload controllers: skipping %s", e.message)
                workloads = workloads[:bad] + workloads[bad + 1:]
        return None

    def sync_once(self) -> int:
        """One pass over the store; returns the number of objects created."""
        from kubesched.apiserver.errors import APIError
        from kubesched.apiserver.registry import info_for_object

        store = self.server.store
        workloads = [o for space in WORKLOAD_SPACES for e in store.list(space)
                     if not (o := e.obj()).get("metadata", {}).get("deletionTimestamp")]
        self.passes += 1
        pods = [e.obj() for e in store.list("pods")]
        # podFailurePolicy: Ignore'd failed pods are not seen (not counted); a FailJob match fails its Job
        ignored, failing = failure_policy_outcomes([w for w in workloads if w.get("kind") == "Job"], pods)
        if ignored:
            pods = [p for p in pods if p["metadata"].get("uid") not in ignored]
        if failing:
            self._fail_jobs([w for w in workloads if w["metadata"].get("uid") in failing], failing, pods)
            workloads = [w for w in workloads if w["metadata"].get("uid") not in failing]
        ctl = self._controllers(workloads) if workloads else None
        if ctl is None:
            self.failures = 0
            return 0
        res = ctl.sync(pods, [e.obj() for e in store.list("nodes")],
                       [e.obj() for e in store.list("persistentvolumeclaims")],
                       [e.obj() for space in SCHEDULING_SPACES for e in store.list(space)])
        new_rs = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o, _ in res.created
                  if o["kind"] == "ReplicaSet"}
        # a Job's Workload is created alone: its PodGroup (owned by it, by uid) and the pods come
        # with the next pass, once the server has given the Workload its uid
        new_workload_jobs = {i for o, i in res.created if o["kind"] == "Workload"}
        n = failures = 0
        for obj, _ in res.updated:  # a Deployment scales its ReplicaSets; the Job controller a gang's minCount
            meta = obj["metadata"]
            space = _KIND_SPACE[obj["kind"]]
            entry = store.get(space, meta["namespace"], meta["name"])
            if entry is None:
                continue
            if obj["kind"] in ("ReplicaSet", "Deployment"):
                failures += not self._update(space, obj, entry)
                continue
            track_write(self.server, space, entry.obj(), obj, CONTROLLER_MANAGER)
            try:
                store.update(space, meta["namespace"], meta["name"], obj, expect_rv=entry.rv)
            except (Conflict, KeyNotFound):
                self._wake.set()
        for d, rev in res.revisions:  # SetDeploymentRevision, written with the status (sync.go getNewReplicaSet)
            meta = d["metadata"]
            entry = store.get("apps/deployments", meta["namespace"], meta["name"])
            if entry is not None:
                cur = entry.obj()
                cur["metadata"].setdefault("annotations", {})[REVISION] = rev
                failures += not self._update("apps/deployments", cur, entry, sub="status")
        for obj, _ in res.deleted:  # a ReplicaSet's surplus pods, old ReplicaSets beyond the history limit
            failures += not self._delete(obj)
        for obj, i in res.created:
            meta = obj["metadata"]
            if i in new_workload_jobs and obj["kind"] != "Workload":
                self._wake.set()
                continue
            owner = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
            if obj["kind"] == "Pod" and owner is not None and owner.get("kind") == "ReplicaSet" \
                    and (meta["namespace"], owner.get("name")) in new_rs:
                self._wake.set()  # next pass, with the uid the server gives the ReplicaSet
                continue
            meta.pop("uid", None)  # the server assigns it
            try:
                # a controller's POST: injected write faults apply, then admission and storage
                self.server.write_fault(info_for_object(obj), "", "create")
                self._create(obj)
                n += 1
            except APIError as e:
                failures += 1
                log.warning("workload controllers: create %s %s/%s: %s", obj["kind"], meta.get("namespace"),
                            meta.get("name"), e)
        for obj, typ, reason, message in res.events:
            if not any(o["kind"] == "Workload" and i in new_workload_jobs for o, i in res.created) \
                    or reason == "WorkloadCreated":
                self._record(obj, typ, reason, message)
        self.created += n
        self.failures = failures
        # a Job whose Workload was just created alone keeps its status until the next pass creates
        # its PodGroup and pods: upstream does both in one sync, before setting status.startTime,
        # and a Job with a startTime no longer counts as new (job_scheduling_manager.go L117)
        fresh_jobs = {(o["metadata"].get("namespace") or "default", ref.get("name"))
                      for o, _ in res.created if o["kind"] == "Workload"
                      and (ref := (o.get("spec") or {}).get("controllerRef") or {}).get("kind") == "Job"}
        self._write_statuses(skip_jobs=fresh_jobs, hidden_pods=ignored)
        self._release_job_pods()
        self._sync_history()
        return n

    def _fail_jobs(self, jobs: list[dict[str, Any]], failing: dict[str, str], pods: list[dict[str, Any]]) -> None:
        """Jobs a pod failed by a ``FailJob`` rule (job_controller.go ``trackJobStatusAndRemoveFinalizers``,
        ``enactJobFinished``): ``FailureTarget`` (reason ``PodFailurePolicy``, the rule's message), their
        running pods deleted, then ``Failed`` once none is left, with a Warning event."""
        from kubesched.apiserver.registry import now_rfc3339

        store = self.server.store
        for job in jobs:
            meta = job["metadata"]
            ns, uid, msg = meta.get("namespace") or "default", meta.get("uid"), failing[str(meta.get("uid"))]
            mine = [p for p in pods if any(r.get("controller") and r.get("uid") == uid
                                           for r in p["metadata"].get("ownerReferences") or ())]
            running = [p for p in mine if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
            for p in running:
                if not p["metadata"].get("deletionTimestamp"):
                    self._delete(p)
            entry = store.get("batch/jobs", ns, meta["name"])
            if entry is None:
                continue
            new = entry.obj()
            st = new.setdefault("status", {})
            conds = list(st.get("conditions") or [])
            now = now_rfc3339()

            def cond(t: str, now: str = now, msg: str = msg) -> dict[str, Any]:
                return {"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                        "reason": JOB_REASON_POD_FAILURE_POLICY, "message": msg}

            types = {c.get("type") for c in conds}
            if "FailureTarget" not in types:
                conds.append(cond("FailureTarget"))
            finished = not running
            if finished:
                conds.append(cond("Failed"))
            failed = max(sum((p.get("status") or {}).get("phase") == "Failed" for p in mine),
                         int(st.get("failed") or 0))
            st.update({"conditions": conds, "failed": failed, "ready": 0, "terminating": len(running),
                       "uncountedTerminatedPods": {}})
            st.pop("active", None)
            track_write(self.server, "batch/jobs", entry.obj(), new, CONTROLLER_MANAGER, "status")
            try:
                store.update("batch/jobs", ns, meta["name"], new, expect_rv=entry.rv)
            except (Conflict, KeyNotFound):
                self._wake.set()
                continue
            if finished:
                self._record(new, "Warning", JOB_REASON_POD_FAILURE_POLICY, msg)

    def _sync_history(self) -> None:
        """StatefulSets' and DaemonSets' ControllerRevisions (:mod:`kubesched.apiserver.history`):
        created, renumbered on a rollback and truncated to ``revisionHistoryLimit`` through the
        server's create/update/delete paths, as the controllers' requests are."""
        from kubesched.apiserver.errors import APIError

        store = self.server.store
        parents = [e.obj() for space in ("apps/statefulsets", "apps/daemonsets") for e in store.list(space)]
        if not parents:
            return
        revisions = [e.obj() for e in store.list(_REVISIONS)]
        pods = [e.obj() for e in store.list("pods")]
        info = next(r for r in served.RESOURCES if r.key == _REVISIONS)
        for parent in parents:
            ns = parent["metadata"].get("namespace") or "default"
            plan = plan_history(parent, [r for r in revisions if r["metadata"].get("namespace") == ns],
                                [p for p in pods if p["metadata"].get("namespace") == ns])
            try:
                for cr in plan.create:
                    self._create(cr)
                for old, number in plan.renumber:
                    entry = store.get(_REVISIONS, ns, old["metadata"]["name"])
                    if entry is not None:
                        new = entry.obj()
                        new["revision"] = number
                        self.server.commit_update(info, ns, new["metadata"]["name"], new, entry, "", None,
                                                  manager=CONTROLLER_MANAGER)
                for gone in plan.delete:
                    self._delete(dict(gone))
            except (APIError, Conflict, KeyNotFound) as e:
                log.debug("workload controllers: history of %s %s/%s: %s", parent.get("kind"), ns,
                          parent["metadata"].get("name"), e)
                self._wake.set()

    def _create(self, obj: dict[str, Any]) -> Any:
        """A controller's POST of ``obj`` through the server's create path, as
        ``kube-controller-manager`` (its managedFields entry); raises :class:`APIError`."""
        from kubesched.apiserver.registry import info_for_object

        info = info_for_object(obj)
        ns = ((obj.get("metadata") or {}).get("namespace") or "default") if info.namespaced else ""
        return self.server.create_object(info, ns, obj, manager=CONTROLLER_MANAGER)

    def _update(self, space: str, obj: dict[str, Any], entry: Any, sub: str = "") -> bool:
        """A controller's update of a workload's spec/annotations through the server's update
        path (generation, admission; ``sub="status"``: ``UpdateStatus``, which carries the
        annotations); False when it failed (retried next pass)."""
        from kubesched.apiserver.errors import APIError

        meta = obj["metadata"]
        cur = entry.obj()
        if cur["metadata"].get("uid") != meta.get("uid"):
            return True
        cur["spec"] = obj.get("spec", cur.get("spec"))
        if meta.get("annotations") is not None:
            cur["metadata"]["annotations"] = meta["annotations"]
        info = next(r for r in served.RESOURCES if r.key == space)
        try:
            self.server.commit_update(info, meta["namespace"], meta["name"], cur, entry, sub, None,
                                      manager=CONTROLLER_MANAGER)
        except (APIError, Conflict, KeyNotFound) as e:
            log.debug("workload controllers: update %s %s/%s: %s", space, meta["namespace"], meta["name"], e)
            self._wake.set()
            return False
        return True

    def _delete(self, obj: dict[str, Any]) -> bool:
        """A controller's DELETE (Background; the uid as precondition); False when it failed."""
        from kubesched.apiserver.errors import APIError
        from kubesched.apiserver.registry import info_for_object

        meta = obj["metadata"]
        try:
            self.server.write_fault(info_for_object(obj), "", "delete")
            self.server.delete_object(info_for_object(obj), meta.get("namespace") or "", meta["name"],
                                      {"propagationPolicy": "Background", "preconditions": {"uid": meta.get("uid")}})
        except APIError as e:
            if e.code == 404:
                return True
            log.warning("workload controllers: delete %s %s/%s: %s", obj.get("kind"), meta.get("namespace"),
                        meta.get("name"), e)
            self._wake.set()
            return False
        return True

    def _release_job_pods(self) -> None:
        """The Job controller removes its ``batch.kubernetes.io/job-tracking`` finalizer from pods
        it has counted: finished or being deleted (job_controller.go ``trackJobStatusAndRemoveFinalizers``),
        and from pods whose Job is gone."""
        from kubesched.apiserver.errors import APIError

        store = self.server.store
        info = next(r for r in served.RESOURCES if r.key == "pods")
        for e in store.list("pods"):
            if JOB_TRACKING_FINALIZER.encode() not in e.data:
                continue
            pod = e.obj()
            md = pod["metadata"]
            if JOB_TRACKING_FINALIZER not in (md.get("finalizers") or ()):
                continue
            ns = md.get("namespace") or ""
            owner = next((r for r in md.get("ownerReferences") or () if r.get("controller")), None)
            job = store.get("batch/jobs", ns, owner.get("name", "")) if owner and owner.get("kind") == "Job" else None
            job_gone = job is None or job.obj()["metadata"].get("uid") != (owner or {}).get("uid")
            done = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or md.get("deletionTimestamp")
            if not (done or job_gone):
                continue
            md["finalizers"] = [f for f in md["finalizers"] if f != JOB_TRACKING_FINALIZER]
            try:
                self.server.commit_update(info, ns, md["name"], pod, e, "", None, manager=CONTROLLER_MANAGER)
            except (APIError, Conflict, KeyNotFound):
                self._wake.set()

    def _write_statuses(self, skip_jobs: set[tuple[str, Any]] | None = None,
                        hidden_pods: set[str] | None = None) -> None:
        """Each workload's ``.status`` as its upstream controller computes it
        (:mod:`kubesched.controllers.workloadstatus`), written when it changed, as the controllers' status
        updates are; a pass is scheduled for when a Ready pod becomes available (minReadySeconds).
        ``hidden_pods``: uids of pods the controllers do not count (podFailurePolicy ``Ignore``)."""
        store = self.server.store
        workloads = [e.obj() for space in WORKLOAD_SPACES for e in store.list(space)]
        pods = [e.obj() for e in store.list("pods")]
        if hidden_pods:
            pods = [p for p in pods if p["metadata"].get("uid") not in hidden_pods]
        updates, recheck = workload_statuses(workloads, pods, features=self.server.features)
        for obj, status in updates:
            meta = obj["metadata"]
            if obj["kind"] == "Job" and (meta.get("namespace") or "default", meta.get("name")) in (skip_jobs or ()):
                continue
            space = _KIND_SPACE[str(obj["kind"])]
            entry = store.get(space, meta.get("namespace") or "", meta["name"])
            if entry is None:
                continue
            new = entry.obj()
            new["status"] = status
            track_write(self.server, space, entry.obj(), new, CONTROLLER_MANAGER, "status")
            try:
                store.update(space, meta.get("namespace") or "", meta["name"], new, expect_rv=entry.rv)
            except (Conflict, KeyNotFound):
                self._wake.set()
        if recheck is not None:
            delay = max(0.0, (recheck - datetime.now(UTC)).total_seconds()) + 0.01
            try:
                asyncio.get_running_loop().call_later(delay, self._wake.set)
            except RuntimeError:
                pass  # called outside the server's loop (tests): nothing to wake

    def _record(self, obj: dict[str, Any], typ: str, reason: str, message: str) -> None:
        """A core/v1 Event from the job-controller (``recorder.Eventf``), as kube-controller-manager
        emits it."""
        from kubesched.apiserver.registry import now_rfc3339

        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        now = now_rfc3339()
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": f"{meta.get('name')}.{time.time_ns():x}", "namespace": ns},
              "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                                 "name": meta.get("name"), "namespace": ns, "uid": meta.get("uid")},
              "reason": reason, "message": message, "type": typ, "source": {"component": "job-controller"},
              "firstTimestamp": now, "lastTimestamp": now, "count": 1,
              "reportingComponent": "job-controller", "reportingInstance": ""}
        try:
            self._create(ev)
        except Exception as e:  # noqa: BLE001 - an event that cannot be written is only logged
            log.warning("workload controllers: event %s for %s/%s not recorded: %s", reason, ns, meta.get("name"), e)
