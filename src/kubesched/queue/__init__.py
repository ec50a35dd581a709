"""kubesched.queue — the scheduling queue: activeQ, backoffQ, unschedulablePods."""

from kubesched.queue.scheduling_queue import SchedulingQueue

__all__ = ["SchedulingQueue"]
