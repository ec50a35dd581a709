"""The unschedulable pool (upstream ``pkg/scheduler/backend/queue/unschedulable_entities.go``,
v1.37.2) with an index of its entities by the plugins whose events can move them.

Upstream's ``moveEntitiesToActiveOrBackoffQueue`` (scheduling_queue.go L1919-1961) looks at every
entity in the pool on every cluster event and skips, one by one, the gated entities whose gating
plugin did not register for the event (``GatingPluginEvents``) and, inside
``isPodWorthRequeuing``, the plugins that did not reject the pod or did not register for it. An
entity none of whose rejecting plugins registered for the event is therefore never moved and none
of its hints runs. :meth:`UnschedulableEntities.candidates` returns exactly the entities that can
get past those two checks — in the pool's order — from an index kept up to date on insert and
delete, so that the per-event walk costs the candidates, not the pool.

The index is allowed to be a superset of the truth (an entity listed under a plugin that no
longer rejects it costs one extra evaluation that answers Skip, as the plain walk would), never a
subset: whoever can widen an entity's rejectors or change its gate while it sits in the pool calls
:meth:`reindex` (the queue does so after PreEnqueue).
"""

from __future__ import annotations

from collections.abc import Collection, ItemsView, Iterator, KeysView, ValuesView
from typing import Any

__all__ = ["UnschedulableEntities"]


class UnschedulableEntities:
    """``key → entity`` in insertion order (a dict's semantics: re-setting a present key keeps its
    place), plus three indexes over the keys:

    * ``gated_by[plugin]`` — gated entities by their ``gating_plugin``;
    * ``rejected_by[plugin]`` — other entities under each plugin of ``unschedulable_plugins`` ∪
      ``pending_plugins``;
    * ``always`` — entities the index cannot narrow: pods without rejecting plugins (any event
      moves them after backoff) and pod groups (upstream ``isEntityWorthRequeuing`` asks each
      member).

    Entities are duck-typed: ``gated``, ``gating_plugin``, ``unschedulable_plugins``,
    ``pending_plugins`` and, for a pod group, ``members``.
    """

    __slots__ = ("_map", "_order", "_next", "_slots", "gated_by", "rejected_by", "always")

    def __init__(self) -> None:
        self._map: dict[str, Any] = {}
        self._order: dict[str, int] = {}
        """key → insertion number (the pool's order, for merging the indexes)."""
        self._next = 0
        self._slots: dict[str, tuple[str, ...] | str | None] = {}
        """key → where the index lists it: a gating plugin (str), rejecting plugins (tuple), or
        None (``always``)."""
        self.gated_by: dict[str, dict[str, None]] = {}
        self.rejected_by: dict[str, dict[str, None]] = {}
        self.always: dict[str, None] = {}

    # ─────────────── mapping ───────────────

    def __setitem__(self, key: str, entity: Any) -> None:
        if key in self._map:
            self._unindex(key)
        else:
            self._next += 1
            self._order[key] = self._next
        self._map[key] = entity
        self._index(key, entity)

    def __delitem__(self, key: str) -> None:
        del self._map[key]
        self._unindex(key)
        del self._order[key]

    def pop(self, key: str, default: Any = None) -> Any:
        if key not in self._map:
            return default
        entity = self._map[key]
        del self[key]
        return entity

    def __getitem__(self, key: str) -> Any:
        return self._map[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._map.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __bool__(self) -> bool:
        return bool(self._map)

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def keys(self) -> KeysView[str]:
        return self._map.keys()

    def values(self) -> ValuesView[Any]:
        return self._map.values()

    def items(self) -> ItemsView[str, Any]:
        return self._map.items()

    # ─────────────── index ───────────────

    def reindex(self, key: str) -> None:
        """Re-file a present entity whose gate or rejecting plugins changed in place."""
        entity = self._map.get(key)
        if entity is not None:
            self._unindex(key)
            self._index(key, entity)

    def _index(self, key: str, entity: Any) -> None:
        if entity.gated:
            plugin: str = entity.gating_plugin
            self.gated_by.setdefault(plugin, {})[key] = None
            self._slots[key] = plugin
            return
        members = getattr(entity, "members", None)
        if members is not None or not (entity.unschedulable_plugins or entity.pending_plugins):
            self.always[key] = None
            self._slots[key] = None
            return
        plugins = tuple(entity.unschedulable_plugins | entity.pending_plugins)
        rejected_by = self.rejected_by
        for p in plugins:
            keys = rejected_by.get(p)
            if keys is None:
                rejected_by[p] = {key: None}
            else:
                keys[key] = None
        self._slots[key] = plugins

    def _unindex(self, key: str) -> None:
        slot = self._slots.pop(key)
        if slot is None:
            del self.always[key]
        elif isinstance(slot, str):
            keys = self.gated_by[slot]
            del keys[key]
            if not keys:
                del self.gated_by[slot]
        else:
            rejected_by = self.rejected_by
            for p in slot:
                keys = rejected_by[p]
                del keys[key]
                if not keys:
                    del rejected_by[p]

    def candidates(self, plugins: Collection[str]) -> list[Any]:
        """The entities an event that ``plugins`` registered for can move, in the pool's order:
        the ``always`` ones, the ungated ones rejected by one of ``plugins``, and the gated ones
        whose gating plugin is one of ``plugins``."""
        if not self._map:
            return []
        keys: set[str] = set(self.always)
        for p in plugins:
            k = self.rejected_by.get(p)
            if k is not None:
                keys.update(k)
            k = self.gated_by.get(p)
            if k is not None:
                keys.update(k)
        if len(keys) == len(self._map):
            return list(self._map.values())
        m = self._map
        return [m[k] for k in sorted(keys, key=self._order.__getitem__)]

    def in_order(self, keys: set[str]) -> list[Any]:
        """The entities of ``keys`` present in the pool, in the pool's order."""
        m = self._map
        return [m[k] for k in sorted((k for k in keys if k in m), key=self._order.__getitem__)]
