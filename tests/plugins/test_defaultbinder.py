"""DefaultBinder: binds through handle.client; failures become Error statuses."""

from __future__ import annotations

import asyncio

from kubesched.errors import BindError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_table import NodeTable
from kubesched.plugins import defaultbinder
from kubesched.testing.wrappers import MakePod


class _Client:
    def __init__(self, exc=None):
        self.calls = []
        self.exc = exc

    async def bind(self, pod, node_name):
        self.calls.append((pod.metadata.name, node_name))
        if self.exc:
            raise self.exc


def test_bind_ok():
    c = _Client()
    pl = defaultbinder.new(None, Handle(nodes=NodeTable(), client=c))
    assert asyncio.run(pl.bind(CycleState(), MakePod().name("p").obj(), "n1")) is None
    assert c.calls == [("p", "n1")]


def test_bind_error():
    c = _Client(BindError("pods \"p\" not found"))
    pl = defaultbinder.new(None, Handle(nodes=NodeTable(), client=c))
    st = asyncio.run(pl.bind(CycleState(), MakePod().name("p").obj(), "n1"))
    assert st.code == Code.ERROR and st.message() == 'pods "p" not found' and isinstance(st.error, BindError)


def test_bind_other_exception_and_no_client():
    pl = defaultbinder.new(None, Handle(nodes=NodeTable(), client=_Client(RuntimeError("boom"))))
    assert asyncio.run(pl.bind(CycleState(), MakePod().obj(), "n")).code == Code.ERROR
    assert asyncio.run(defaultbinder.new(None, Handle(nodes=NodeTable())).bind(CycleState(), MakePod().obj(), "n")).code == Code.ERROR
