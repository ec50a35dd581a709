"""The Node informer's initial LIST delivered as one batch (``Reflector.replace`` → ``Informer.on_adds``
→ ``EventHandlers._nodes_add`` → ``Scheduler.on_nodes_add``: the table filled in bulk) leaves the
cache and the queue as delivering it one node at a time does — with bound pods already waiting for
their nodes, pods in the queue, pods unschedulable (then the scheduler adds the nodes one by one) —
and the watch events that follow apply the same way."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.framework.test_node_table_bulk import NODE, _node, _state

from kubesched.kube.adapter import EventHandlers
from kubesched.kube.informer import RESOURCES, Informer
from kubesched.scheduler import Scheduler
from kubesched.testing.wrappers import MakeNode, MakePod


class PerObject:
    """The informer as a sink without ``on_adds``: every add of the list one by one."""

    def __init__(self, inf: Informer) -> None:
        self.on_add, self.on_update, self.on_delete, self.on_synced = (
            inf.on_add, inf.on_update, inf.on_delete, inf.on_synced)


def _line(typ: str, obj: Any) -> bytes:
    return msgspec.json.encode({"type": typ, "object": msgspec.Raw(msgspec.json.encode(obj))})


def _queue_state(sched: Scheduler) -> Any:
    q = sched.queue
    return sorted((k, q.where(k)) for k in q._where), q.counts()


def _run(nodes: list[Any], bound: list[Any], pending: list[Any], cycles: int, watch: list[bytes],
         batch: bool) -> tuple[Any, ...]:
    sched = Scheduler(seed=1)
    handlers = EventHandlers(sched)
    pods = handlers.pod_handler()
    for p in [*bound, *pending]:
        pods.on_add(p, True)
    attempts = [sched.scheduling_cycle() for _ in range(cycles)]  # no node yet: unschedulable
    inf = Informer(None, RESOURCES["Node"])  # type: ignore[arg-type]
    inf.add_event_handler(handlers.node_handler())
    if not batch:
        inf.reflector.sink = PerObject(inf)  # type: ignore[assignment]
    for n in nodes:
        inf.reflector.store.items.pop(n.metadata.name, None)
    inf.reflector.replace(list(nodes), "7")
    assert inf.has_synced and inf.reflector.last_sync_rv == "7"
    after_list = (_state(sched.cache.table), sorted(sched.cache._orphans), _queue_state(sched))
    for ln in watch:
        inf.reflector._handle_line(ln)
    after_watch = (_state(sched.cache.table), sorted(sched.cache._orphans), _queue_state(sched))
    nxt = sched.scheduling_cycle()
    chosen = getattr(nxt, "node_name", None) if nxt is not None else None
    return (len(attempts), after_list, after_watch, chosen, sorted(inf.store.keys()))


@settings(max_examples=60, deadline=None)
@given(specs=st.lists(NODE, max_size=10, unique_by=lambda s: s["name"]),
       n_bound=st.integers(0, 3), n_pending=st.integers(0, 3), cycles=st.integers(0, 3),
       data=st.data())
def test_batch_initial_list_leaves_what_per_node_delivery_leaves(specs: list[dict[str, Any]], n_bound: int,
                                                                   n_pending: int, cycles: int,
                                                                   data: st.DataObject) -> None:
    nodes = [_node(s) for s in specs]
    names = [f"n{i}" for i in range(7)]
    bound = [MakePod().name(f"b{i}").uid(f"b{i}").req(cpu="100m").node(data.draw(st.sampled_from(names))).obj()
             for i in range(n_bound)]
    pending = [MakePod().name(f"p{i}").uid(f"p{i}").req(cpu="100m").obj() for i in range(n_pending)]
    watch = []
    if nodes:
        changed = msgspec.structs.replace(nodes[0], metadata=msgspec.structs.replace(
            nodes[0].metadata, labels={**(nodes[0].metadata.labels or {}), "later": "yes"}, resource_version="8"))
        watch += [_line("MODIFIED", changed), _line("DELETED", nodes[-1])]
    watch.append(_line("ADDED", MakeNode().name("late").capacity(cpu="8", memory="8Gi", pods="110").obj()))
    one = _run(nodes, bound, pending, min(cycles, n_pending), watch, batch=False)
    many = _run(nodes, bound, pending, min(cycles, n_pending), watch, batch=True)
    assert many == one


def test_the_initial_list_reaches_the_node_handler_as_one_batch() -> None:
    sched = Scheduler(seed=1)
    handler = EventHandlers(sched).node_handler()
    seen: list[int] = []
    on_adds = handler.on_adds

    def spy(objs: list[Any], initial: bool) -> None:
        seen.append(len(objs))
        assert initial
        on_adds(objs, initial)

    handler.on_adds = spy
    inf = Informer(None, RESOURCES["Node"])  # type: ignore[arg-type]
    inf.add_event_handler(handler)
    nodes = [MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(5)]
    inf.reflector.replace(nodes, "3")
    assert seen == [5]
    assert list(sched.cache.table.row_of) == [f"n{i}" for i in range(5)]
    # a relist into a store that is not empty is a diff, delivered per object
    inf.reflector.replace([*nodes[1:], MakeNode().name("n9").obj()], "4")
    assert seen == [5] and "n0" not in sched.cache.table.row_of and "n9" in sched.cache.table.row_of


def test_a_node_the_table_rejects_is_skipped_and_the_others_are_added(caplog: Any) -> None:
    sched = Scheduler(seed=1)
    inf = Informer(None, RESOURCES["Node"])  # type: ignore[arg-type]
    inf.add_event_handler(EventHandlers(sched).node_handler())
    bad = MakeNode().name("bad").capacity(cpu="4", memory="8Gi", pods="110").obj()
    bad.status.allocatable["cpu"] = "lots"
    nodes = [MakeNode().name(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in ("a", "b")]
    inf.reflector.replace([nodes[0], bad, nodes[1]], "3")
    assert sorted(sched.cache.table.row_of) == ["a", "b"]
    assert "failed" in caplog.text
