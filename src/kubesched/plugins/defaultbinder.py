"""DefaultBinder (upstream ``pkg/scheduler/framework/plugins/defaultbinder``, v1.34).

Bind (a coroutine, awaited by the binding cycle): ``await handle.client.bind(pod, node_name)``
— the live adapter POSTs
``pods/{name}/binding`` with ``v1.Binding{ObjectMeta{namespace, name, uid}, Target{Kind: "Node",
Name: node_name}}``, the simulator updates its store. Any failure (a
:class:`~kubesched.errors.BindError` or another exception) is an Error status carrying the
error (upstream ``fwk.AsStatus(err)``); no client → Error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework.interface import Code, Status, as_status

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle

__all__ = ["NAME", "DefaultBinder", "new"]

NAME = "DefaultBinder"


class DefaultBinder:
    """Bind only. See the module docstring."""

    name = NAME

    def __init__(self, handle: Handle | None) -> None:
        self.handle = handle

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Await ``client.bind``; None on success, else an Error status carrying the error."""
        client = self.handle.client if self.handle is not None else None
        if client is None:
            return Status(Code.ERROR, ("no client to bind pods with",))
        try:
            await client.bind(pod, node_name)
        except Exception as e:  # noqa: BLE001 - every bind failure is an Error status
            return as_status(e)
        return None


def new(args: Any, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
