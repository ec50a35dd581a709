"""kubesched.scheduler — the scheduling cycle and binding cycle over the cache and queue."""

from kubesched.scheduler.schedule_one import truncate_message
from kubesched.scheduler.scheduler import Attempt, Scheduler, SchedulerStats
from kubesched.scheduler.scheduling_cycle import num_feasible_nodes_to_find

__all__ = ["Attempt", "Scheduler", "SchedulerStats", "num_feasible_nodes_to_find", "truncate_message"]
