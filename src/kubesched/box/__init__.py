"""kubesched.box — ``kubesched up``: the box API server, manifests applied through its API,
and the live scheduler (``kubesched run``'s Runner) against it, in one process and one loop.

Modules: :mod:`~kubesched.box.apply` (discovery-driven creation of manifest objects, in
dependency order), :mod:`~kubesched.box.board` (pods as seen through a watch: pending → bound,
reasons), :mod:`~kubesched.box.up` (:class:`Up`, :class:`UpOptions`, the idle rule).

Layer: above ``apiserver``, ``kube`` and ``sim`` (manifest reading only); only ``cli`` imports it.
"""

from kubesched.box.up import Up, UpOptions, UpView

__all__ = ["Up", "UpOptions", "UpView"]
