"""The workload controllers as ``simulate`` uses them.

The implementation is :mod:`kubesched.api.workloads` (pure: objects in, objects out), at the
``api`` layer so that the box's controllers (:mod:`kubesched.apiserver.controllers`) run the
same code; this module is where the simulator imports it from. It re-exports that module's
public names (its ``__all__``) and defines nothing of its own.
"""

from __future__ import annotations

from kubesched.api import workloads as _workloads
from kubesched.api.workloads import *  # noqa: F403  (the re-export is the whole point)

__all__ = list(_workloads.__all__)
