"""kubesched.scheduler — the scheduling cycle and binding cycle over the cache and queue.

Public API (the engine seam, see ``docs/architecture.md``, "The seams"):

* ``Scheduler.scheduling_cycle() -> ScheduledPod | Attempt | PodGroupCycleResult | None`` —
  synchronous; never awaits; the NodeTable/cache do not change under it (but for a pod-group
  cycle's own simulated assumptions, reverted before it returns). With GenericWorkload a popped
  pod group gives a ``PodGroupCycleResult``: run ``binding_cycle(sp)`` for each of its
  ``scheduled`` members; its ``attempts`` (failed members) are already handled and reported.
* ``async Scheduler.binding_cycle(sp: ScheduledPod) -> Attempt`` — live: one
  ``asyncio.create_task`` per ScheduledPod (clock = ``AsyncioClock``).
* ``Scheduler.schedule_one() -> Attempt | None`` — both, the binding cycle run by
  :func:`drive` (simulator/tests only: :func:`drive` accepts only ``SimFuture`` s).
* ``Scheduler.handle_scheduling_failure(fw, qpi, status, nominated_node_name=None, start=None)``,
  ``Scheduler.handle_binding_cycle_error(sp, status)``.
* ``drive(coro) -> DrivenTask`` — the trampoline (``done()``, ``result()``).
* Informer handlers: ``on_pod_add/update/delete`` (delete accepts a stale tombstone pod),
  ``on_node_add/update/delete``, and ``on_object_event(kind, old, new)`` for every other watched
  kind (old None = Add, new None = Delete; kinds that are not an ``EventResource`` are ignored).
* ``Scheduler.waiting_pods`` (shared ``WaitingPodsMap``); per profile ``Framework.waiting_pods``,
  ``Handle.iterate_waiting_pods(fn)``, ``Handle.get_waiting_pod(uid)``,
  ``Handle.reject_waiting_pod(uid)``; ``WaitingPod.allow(plugin)`` / ``reject(plugin, msg)``.
  The key is the pod UID, or ``namespace/name`` for pods without one.

Points of the seam contract beyond the protocols' own docstrings:

* ``schedule_one()`` returns an ``Attempt`` with ``result="waiting"`` when the binding cycle
  is parked on Permit (the final attempt reaches ``Scheduler.on_attempt`` later).
* ``ClusterClient.update_pod_condition(..., nominated_node_name)``: None leaves
  ``status.nominatedNodeName`` alone, ``""`` clears it, a name sets it (NominatingInfo
  ModeOverride). Failures pass ``""`` (upstream ``clearNominatedNode``) unless a PostFilter
  plugin ran (then its nominating info, or None); at emulated v1.34 a failure without
  PostFilter plugins, or any failure with NominatedNodeNameForExpectation on, passes None.
* ``ClusterClient.set_nominated_node_name(pod, node)`` (optional): the binding cycle's
  ``status.nominatedNodeName`` patch (v1.35+, NominatedNodeNameForExpectation) when PreBind
  has work or Permit waits.
* ``Scheduler.pods_in_pre_bind`` (shared ``PodsInPreBindMap``, v1.36+): preemption cancels a
  victim in PreBind in memory (``PodInPreBind.cancel_pod``); a PreBind plugin that waits may
  register ``CycleState.pod_in_pre_bind.on_cancel(fn)`` to stop waiting.
* PV/PVC/claim writes are coroutines: ``update_persistent_volume(pv)``,
  ``update_persistent_volume_claim(pvc)``, ``update_resource_claim_status(claim)``. PreBind and
  Bind plugins may be ``async def`` (the runtime awaits them); ``DefaultBinder.bind`` is.
  VolumeBinding's PreBind writes PVs/PVCs, DynamicResources' PreBind writes claim status.
* ``ClusterClient.add_pod_condition(pod, condition)`` takes a dict with upstream's JSON keys
  (``type``, ``status``, ``reason``, ``message``); ``record_event(regarding, type, reason,
  action, note, related=None)`` — preemption passes the preemptor as ``related``.
* ``ClusterClient.patch_pod_group_condition(pod_group, condition)`` (optional, GenericWorkload):
  the PodGroup's ``PodGroupInitiallyScheduled`` condition (dict: ``type``, ``status``,
  ``observedGeneration`` when the object has a generation, ``reason``, ``message``); the engine
  calls it only when the condition changes and never turns a True one False. PodGroups reach the
  engine as raw dicts through ``on_object_event("PodGroup", old, new)``; an update with the same
  non-empty ``resourceVersion`` is ignored.
* ``kubesched.errors.BindError(message, code=None)``: ``code`` is the HTTP status (404, 409…).
* The queue's ``Done`` is called when the binding cycle succeeds, not before PreBind as upstream:
  our queue forgets a pod at ``Done``, and a PreBind/Bind failure must still requeue it.
* ``handle_scheduling_failure`` asks ``lister.get("Pod", ns, name)``: a pod the lister shows
  assigned is not requeued (upstream "Abort adding it back to queue"); a pod gone from the
  queue (deleted, or bound — the informer events remove it) is not requeued either.
* A Filter plugin's Error travels as a Status, as upstream's ``RunFilterPlugins`` returns one:
  ``Framework.run_filter_plugins`` returns the Error status instead of the chunk of verdicts,
  and ``schedule_pod`` returns it (``findNodesThatPassFilters``).
"""

from kubesched.scheduler.attempt import ScheduledPod, truncate_message
from kubesched.scheduler.core import Attempt, SchedulerStats
from kubesched.scheduler.schedule_one import DrivenTask, drive
from kubesched.scheduler.schedule_one_podgroup import PodGroupCycleResult
from kubesched.scheduler.schedule_pod import num_feasible_nodes_to_find
from kubesched.scheduler.scheduler import Scheduler

__all__ = ["Attempt", "DrivenTask", "PodGroupCycleResult", "ScheduledPod", "Scheduler", "SchedulerStats", "drive",
           "num_feasible_nodes_to_find", "truncate_message"]
