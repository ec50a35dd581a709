"""kubesched.scheduler — the scheduling cycle and binding cycle over the cache and queue.

Public API (the engine seam, ``/work/notes/seam-contract.md``):

* ``Scheduler.scheduling_cycle() -> ScheduledPod | Attempt | None``
* ``async Scheduler.binding_cycle(sp: ScheduledPod) -> Attempt``
* ``Scheduler.schedule_one() -> Attempt | None`` (both, the binding cycle run by :func:`drive`)
* ``Scheduler.handle_scheduling_failure(...)``, ``Scheduler.handle_binding_cycle_error(...)``
* ``drive(coro) -> DrivenTask``: the trampoline for binding cycles without asyncio.
* ``Scheduler.on_pod_add/update/delete``, ``on_node_add/update/delete`` (informer handlers).

Deviations from the contract text (documented for the ``live`` branch):

* ``schedule_one()`` returns an ``Attempt`` with ``result="waiting"`` when the binding cycle
  is parked on Permit (the final attempt reaches ``Scheduler.on_attempt`` later).
* ``ClusterClient.update_pod_condition(..., nominated_node_name)``: None leaves
  ``status.nominatedNodeName`` alone, ``""`` clears it, a name sets it (NominatingInfo
  ModeOverride); failures now pass ``""`` as upstream's ``clearNominatedNode`` except when a
  PostFilter plugin ran (its nominating info, or None).
* PV/PVC/claim writes are declared as coroutines ``update_persistent_volume(pv)``,
  ``update_persistent_volume_claim(pvc)``, ``update_resource_claim_status(claim)``; PreBind and
  Bind plugins may be ``async def`` (the runtime awaits them). The in-tree VolumeBinding and
  DynamicResources plugins do not bind volumes/claims yet, so no engine path calls them today.
* ``ClusterClient.add_pod_condition(pod, condition)`` takes a dict with upstream's JSON keys
  (``type``, ``status``, ``reason``, ``message``).
* The queue's ``Done`` is called when the binding cycle ends (success), not before PreBind as
  upstream: our queue forgets a pod at ``Done``, and a PreBind/Bind failure must requeue it.
"""

from kubesched.scheduler.schedule_one import DrivenTask, ScheduledPod, drive, truncate_message
from kubesched.scheduler.scheduler import Attempt, Scheduler, SchedulerStats
from kubesched.scheduler.scheduling_cycle import num_feasible_nodes_to_find

__all__ = ["Attempt", "DrivenTask", "ScheduledPod", "Scheduler", "SchedulerStats", "drive",
           "num_feasible_nodes_to_find", "truncate_message"]
