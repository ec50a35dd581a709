"""Server-side apply: field sets, managedFields, conflicts (``kubectl apply --server-side``).

Follows sigs.k8s.io/structured-merge-diff v6 (``merge/update.go``: Apply and Update,
``fieldpath`` sets and their ``FieldsV1`` serialization) as k8s.io/apimachinery@v0.37.2's
``pkg/util/managedfields/internal`` drives it:

* a field set is the set of paths an object specifies: scalars, atomic lists/maps, the items of
  associative lists (``k:{"name":"c"}`` with ``.``) and set values (``v:"a"``); list and map
  types come from the schema (``x-kubernetes-list-type`` / ``-list-map-keys`` /
  ``-map-type``; an untyped list is atomic);
* **Apply** (manager M, applied config C): a field of C whose value differs from the live
  object and that another manager owns is a conflict (409, ``Apply failed with N conflict(s):
  conflict with "m" [using apps/v1]: .spec.replicas``) unless ``force``, which takes ownership;
  the object becomes live merged with C; fields M applied before and no longer applies are
  removed unless another manager owns them; M's Apply entry is C's field set;
* **Update** (PUT/PATCH/POST by manager U): U gains the fields it added or changed, every other
  manager loses them (no conflicts), removed fields leave every set;
* an object that has no managedFields yet when first applied gets its fields assigned to
  ``before-first-apply`` (``skipnonapplied.go``);
* the identity and server fields (``apiVersion``, ``kind``, ``metadata.name/namespace/uid/
  resourceVersion/generation/creationTimestamp/managedFields``) are never owned
  (``stripmeta.go``), nor is ``status`` of a resource with a status subresource (reset fields).

POST, PUT and PATCH record their manager's Update entry (``fieldManager``, else the User-Agent's
first segment: ``kubectl-create``, ``kubectl-edit``, …) as ``create.go``/``update.go`` do.

Not done: ``apiVersion`` conversion of sets between versions, the cap of 10 Update managers,
resetting managedFields with an empty list.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = [
    "ApplyConflict",
    "CachedResolver",
    "STRIP_META",
    "Schema",
    "apply",
    "decode_fields",
    "encode_fields",
    "field_set",
    "managed_fields_entry",
    "manager_from_user_agent",
    "track_update",
]

#: a schema lookup: the (resolved) schema of a node, or None (untyped: maps granular, lists atomic)
Schema = dict[str, Any] | None
#: resolves a ``$ref`` (built-in kinds) or passes a schema through
Resolver = Callable[[Schema], Schema]
Path = tuple[str, ...]

#: metadata fields never owned (``stripmeta.go``)
STRIP_META = frozenset(("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                         "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"))


class ApplyConflict(Exception):  # upstream's name
    """Conflicts of an apply: ``[(manager entry, path string)]``; :meth:`status` is the 409."""

    def __init__(self, conflicts: list[tuple[dict[str, Any], str]]) -> None:
        super().__init__(conflict_message(conflicts))
        self.conflicts = conflicts

    def status(self, resource: str, group: str, name: str) -> dict[str, Any]:
        causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {_print_manager(m)}", "field": p}
                  for m, p in self.conflicts]
        details: dict[str, Any] = {"name": name, "kind": resource, "causes": causes}
        if group:
            details["group"] = group
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": str(self), "reason": "Conflict", "details": details, "code": 409}


def _print_manager(m: dict[str, Any]) -> str:
    """``printManager`` (conflict.go)."""
    s = json.dumps(m.get("manager", ""))
    if m.get("subresource"):
        s += f" with subresource {json.dumps(m['subresource'])}"
    if m.get("operation") == "Update":  # the manager identifier carries no time (BuildManagerIdentifier)
        s += f" using {m.get('apiVersion', '')}"
    return s


def conflict_message(conflicts: list[tuple[dict[str, Any], str]]) -> str:
    """``getConflictMessage`` (conflict.go)."""
    if len(conflicts) == 1:
        m, p = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {_print_manager(m)}: {p}"
    by: dict[str, list[str]] = {}
    printed: dict[str, str] = {}
    for m, p in conflicts:
        key = json.dumps(m, sort_keys=True)
        by.setdefault(key, []).append(p)
        printed[key] = _print_manager(m)
    lines = []
    for key in sorted(by, key=lambda k: json.loads(k).get("manager", "")):
        lines.append(f"conflicts with {printed[key]}:")
        lines.extend(f"- {p}" for p in by[key])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


def manager_from_user_agent(user_agent: str) -> str:
    """The default field manager: the User-Agent up to its first ``/`` (``prefixFromUserAgent``), 128 chars."""
    return user_agent.split("/", 1)[0][:128]


# ---------------------------------------------------------------------------------- field sets
def _list_type(s: Schema) -> tuple[str, list[str]]:
    if not s:
        return "atomic", []
    lt = s.get("x-kubernetes-list-type")
    if lt == "map":
        return "map", [k for k in s.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
    if lt == "set":
        return "set", []
    if lt is None and s.get("x-kubernetes-patch-merge-key") and s.get("x-kubernetes-patch-strategy") == "merge":
        return "map", [s["x-kubernetes-patch-merge-key"]]
    return "atomic", []


def _child(s: Schema, key: str, resolve: Resolver) -> Schema:
    if not s:
        return None
    if type(resolve) is CachedResolver:
        return resolve.child(s, key)
    props = s.get("properties") or {}
    if key in props:
        return resolve(props[key])
    extra = s.get("additionalProperties")
    return resolve(extra) if isinstance(extra, dict) else None


def _items(s: Schema, resolve: Resolver) -> Schema:
    if not s:
        return None
    if type(resolve) is CachedResolver:
        return resolve.items(s)
    it = s.get("items")
    return resolve(it) if isinstance(it, dict) else None


_UNSET: Any = object()


class _Node:
    """What :class:`CachedResolver` has looked up of one schema node."""

    __slots__ = ("extra", "items", "kids", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema  # held: the node's id stays unique while it is cached
        self.kids: dict[str, Schema] = {}
        self.extra: Schema = _UNSET
        self.items: Schema = _UNSET


class CachedResolver:
    """A ``$ref`` resolver over a fixed set of definitions (a built-in kind's) that remembers the
    resolved child schema of each (schema node, field) and the items schema of each list node, so
    the walks of field sets resolve each ``$ref`` once, not once per object. Use one per set of
    definitions (their nodes are never mutated nor freed); results equal the plain resolver's."""

    __slots__ = ("_nodes", "_resolve")

    def __init__(self, resolve: Resolver) -> None:
        self._resolve = resolve
        self._nodes: dict[int, _Node] = {}

    def __call__(self, s: Schema) -> Schema:
        return self._resolve(s)

    def _node(self, s: dict[str, Any]) -> _Node:
        node = self._nodes.get(id(s))
        if node is None or node.schema is not s:
            node = self._nodes[id(s)] = _Node(s)
        return node

    def child(self, s: dict[str, Any], key: str) -> Schema:
        """``_child``: the resolved schema of field ``key`` of ``s`` (a property, else
        ``additionalProperties``, else None)."""
        node = self._node(s)
        kids = node.kids
        if key in kids:
            return kids[key]
        props = s.get("properties") or {}
        if key in props:  # properties are few: each remembered
            out = kids[key] = self._resolve(props[key])
            return out
        if node.extra is _UNSET:  # other keys (labels, data, ...) are many: one answer for all
            extra = s.get("additionalProperties")
            node.extra = self._resolve(extra) if isinstance(extra, dict) else None
        return node.extra

    def items(self, s: dict[str, Any]) -> Schema:
        """``_items``: the resolved items schema of ``s``, or None."""
        node = self._node(s)
        if node.items is _UNSET:
            it = s.get("items")
            node.items = self._resolve(it) if isinstance(it, dict) else None
        return node.items


#: list-map keys upstream's OpenAPI defaults (``+default="TCP"`` on ContainerPort/ServicePort
#: protocol) that the JSON-schema conversion of kubernetes-validate does not carry
_KEY_DEFAULTS = {"protocol": "TCP"}


def _key_element(item: dict[str, Any], keys: list[str], item_schema: Schema = None) -> str:
    """``k:{...}``: the item's key fields, a missing one from its schema ``default`` (SMD's
    defaulted list-map keys); absent without default: left out."""
    props = (item_schema or {}).get("properties") or {}
    kv: dict[str, Any] = {}
    for k in sorted(keys):
        if k in item:
            kv[k] = item[k]
        elif isinstance(props.get(k), dict) and "default" in props[k]:
            kv[k] = props[k]["default"]
        elif k in _KEY_DEFAULTS and k in props:
            kv[k] = _KEY_DEFAULTS[k]
    return "k:" + json.dumps(kv, separators=(",", ":"), sort_keys=True)


def _value_element(v: Any) -> str:
    return "v:" + json.dumps(v, separators=(",", ":"), sort_keys=True)


def field_set(obj: Any, schema: Schema, resolve: Resolver, *, root: bool = True,
              strip_status: bool = False) -> set[Path]:
    """The paths ``obj`` specifies (members of upstream's field set)."""
    out: set[Path] = set()
    _walk(obj, schema, resolve, (), out, root=root, strip_status=strip_status)
    return out


def _walk(x: Any, s: Schema, resolve: Resolver, path: Path, out: set[Path], *, root: bool = False,
          strip_status: bool = False) -> None:
    if isinstance(x, dict) and (s or {}).get("x-kubernetes-map-type") != "atomic":
        if not x and path:
            out.add(path)
            return
        for k, v in x.items():
            if root and k in ("apiVersion", "kind"):
                continue
            if root and k == "status" and strip_status:
                continue
            cs = _child(s, k, resolve)
            if root and k == "metadata" and isinstance(v, dict):
                for mk, mv in v.items():
                    if mk not in STRIP_META:
                        _walk(mv, _child(cs, mk, resolve), resolve, (*path, "f:metadata", f"f:{mk}"), out)
                continue
            _walk(v, cs, resolve, (*path, f"f:{k}"), out)
        return
    if isinstance(x, list):
        lt, keys = _list_type(s)
        item_s = _items(s, resolve)
        if lt == "map" and keys and all(isinstance(i, dict) for i in x):
            for item in x:
                p = (*path, _key_element(item, keys, item_s))
                out.add(p)
                _walk(item, item_s, resolve, p, out)
            return
        if lt == "set":
            for v in x:
                out.add((*path, _value_element(v)))
            return
    out.add(path)


def encode_fields(paths: set[Path]) -> dict[str, Any]:
    """A set as ``fieldsV1`` (nested maps; ``.`` marks a member that has children)."""
    root: dict[str, Any] = {}
    for p in paths:
        node = root
        for el in p:
            node = node.setdefault(el, {})
    return _sorted_members(root, paths, ())


def _sorted_members(node: dict[str, Any], paths: set[Path], prefix: Path) -> dict[str, Any]:
    """Children in upstream's order (``.`` first, then sorted), ``.`` on members with children."""
    out: dict[str, Any] = {}
    if prefix and node and prefix in paths:
        out["."] = {}
    for k in sorted(node):
        out[k] = _sorted_members(node[k], paths, (*prefix, k))
    return out


def decode_fields(fields: Any, prefix: Path = ()) -> set[Path]:
    """``fieldsV1`` → the set of paths."""
    out: set[Path] = set()
    if not isinstance(fields, dict):
        return out
    for k, v in fields.items():
        if k == ".":
            out.add(prefix)
            continue
        p = (*prefix, k)
        if not v:
            out.add(p)
        else:
            out |= decode_fields(v, p)
    return out


def path_string(p: Path) -> str:
    """``fieldpath.Path.String``: ``.spec.containers[name="c"].image``, ``[=v]`` for set values."""
    s = ""
    for el in p:
        kind, _, rest = el.partition(":")
        if kind == "f":
            s += f".{rest}"
        elif kind == "k":
            kv = json.loads(rest)
            s += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in kv.items()) + "]"
        elif kind == "v":
            s += f"[={rest}]"
        elif kind == "i":
            s += f"[{rest}]"
    return s


# ---------------------------------------------------------------------------------- values
_MISSING = object()


def _value(obj: Any, p: Path) -> Any:
    cur = obj
    for el in p:
        kind, _, rest = el.partition(":")
        if kind == "f":
            if not isinstance(cur, dict) or rest not in cur:
                return _MISSING
            cur = cur[rest]
        elif kind == "k":
            kv = json.loads(rest)
            if not isinstance(cur, list):
                return _MISSING
            cur = next((i for i in cur if isinstance(i, dict) and _key_match(i, kv)), _MISSING)
            if cur is _MISSING:
                return cur
        elif kind == "v":
            v = json.loads(rest)
            if not isinstance(cur, list) or v not in cur:
                return _MISSING
            cur = v
        else:
            return _MISSING
    return cur


def _key_match(item: dict[str, Any], kv: dict[str, Any]) -> bool:
    """Whether a list item has the key values (a missing key field matches its default)."""
    return all(item.get(a, _KEY_DEFAULTS.get(a)) == b for a, b in kv.items())


def _remove(obj: Any, p: Path) -> None:
    if not p:
        return
    parent = _value(obj, p[:-1]) if len(p) > 1 else obj
    kind, _, rest = p[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent.pop(rest, None)
    elif kind == "k" and isinstance(parent, list):
        kv = json.loads(rest)
        parent[:] = [i for i in parent if not (isinstance(i, dict) and _key_match(i, kv))]
    elif kind == "v" and isinstance(parent, list):
        v = json.loads(rest)
        parent[:] = [i for i in parent if i != v]


def _merge(live: Any, applied: Any, s: Schema, resolve: Resolver) -> Any:
    if isinstance(live, dict) and isinstance(applied, dict) and (s or {}).get("x-kubernetes-map-type") != "atomic":
        out = dict(live)
        for k, v in applied.items():
            out[k] = _merge(live.get(k), v, _child(s, k, resolve), resolve) if k in live else v
        return out
    if isinstance(live, list) and isinstance(applied, list):
        lt, keys = _list_type(s)
        if lt == "map" and keys and all(isinstance(i, dict) for i in live + applied):
            item_s = _items(s, resolve)
            out_l = list(live)
            for item in applied:
                ke = _key_element(item, keys, item_s)
                idx = next((i for i, e in enumerate(out_l) if _key_element(e, keys, item_s) == ke), None)
                if idx is None:
                    out_l.append(item)
                else:
                    out_l[idx] = _merge(out_l[idx], item, item_s, resolve)
            return out_l
        if lt == "set":
            return list(live) + [v for v in applied if v not in live]
    return applied


# ---------------------------------------------------------------------------------- operations
def _entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    mf = (obj.get("metadata") or {}).get("managedFields")
    return [e for e in mf if isinstance(e, dict)] if isinstance(mf, list) else []


def _same_manager(e: dict[str, Any], manager: str, operation: str, subresource: str) -> bool:
    return (e.get("manager") == manager and e.get("operation") == operation
            and (e.get("subresource") or "") == subresource)


def _entry(manager: str, operation: str, api_version: str, now: str, paths: set[Path],
           subresource: str) -> dict[str, Any]:
    return managed_fields_entry(manager, operation, api_version, now, encode_fields(paths), subresource)


def managed_fields_entry(manager: str, operation: str, api_version: str, now: str, fields_v1: dict[str, Any],
                         subresource: str = "") -> dict[str, Any]:
    """One ``managedFields`` entry (``ManagedFieldsEntry``) of ``fields_v1`` (encoded)."""
    e: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now,
                         "fieldsType": "FieldsV1", "fieldsV1": fields_v1}
    if subresource:
        e["subresource"] = subresource
    return e


def apply(live: dict[str, Any] | None, applied: dict[str, Any], schema: Schema, resolve: Resolver, *,
          manager: str, force: bool, api_version: str, now: str, strip_status: bool = False,
          subresource: str = "") -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``live`` (None: create), with its
    ``metadata.managedFields``. Raises :class:`ApplyConflict`."""
    base: dict[str, Any] = json.loads(json.dumps(live)) if live is not None else {}
    entries = _entries(base)
    if live is not None and not entries:  # skipnonapplied: the fields set before the first apply
        owned = field_set(base, schema, resolve, strip_status=strip_status)
        if owned:
            entries = [_entry("before-first-apply", "Update", api_version, now, owned, "")]
    sets = [(e, decode_fields(e.get("fieldsV1"))) for e in entries]
    mine = field_set(applied, schema, resolve, strip_status=strip_status)
    conflicts: list[tuple[dict[str, Any], str]] = []
    taken: set[Path] = set()  # force: the conflicting fields move to the applier
    for e, owned in sets:
        if _same_manager(e, manager, "Apply", subresource):
            continue
        for p in sorted(mine & owned):
            if _value(base, p) != _value(applied, p) and not p[-1].startswith(("k:", "v:")):
                taken.add(p)
                conflicts.append(({k: e[k] for k in ("manager", "operation", "apiVersion", "time", "subresource")
                                   if e.get(k)}, path_string(p)))
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    merged = _merge(base, {k: v for k, v in applied.items() if k != "metadata"}, schema, resolve)
    amd_raw = applied.get("metadata")
    amd: dict[str, Any] = amd_raw if isinstance(amd_raw, dict) else {}
    md = dict(base.get("metadata") or {})
    mds = _child(schema, "metadata", resolve)
    for k, v in amd.items():
        if k in ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"):
            continue
        md[k] = _merge(md[k], v, _child(mds, k, resolve), resolve) if k in md else v
    merged["metadata"] = md
    prev = next((o for e, o in sets if _same_manager(e, manager, "Apply", subresource)), set())
    others: set[Path] = set()
    new_entries = []
    for e, owned in sets:
        if _same_manager(e, manager, "Apply", subresource):
            continue
        if force:
            owned = owned - taken
        others |= owned
        if owned:
            new_entries.append({**e, "fieldsV1": encode_fields(owned)})
    for p in sorted(prev - mine - others, key=len, reverse=True):  # no longer applied, nobody else's
        _remove(merged, p)
    new_entries.insert(0, _entry(manager, "Apply", api_version, now, mine, subresource))
    merged["metadata"]["managedFields"] = _order(new_entries)
    return merged


def _order(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Apply entries before Update entries, each by manager (upstream's encoding order is by time;
    this keeps a stable order)."""
    return sorted(entries, key=lambda e: (e.get("operation") != "Apply", e.get("time", ""), e.get("manager", "")))


def track_update(old: dict[str, Any], new: dict[str, Any], schema: Schema, resolve: Resolver, *, manager: str,
                 api_version: str, now: str, subresource: str = "", strip_status: bool = False,
                 unstructured: bool = False) -> None:
    """Record an Update by ``manager`` in ``new['metadata']['managedFields']`` (in place): it owns
    what it added or changed; others lose those fields (``managedfieldsupdater.go``). The entries
    start from those the request carries, else the live object's (``decodeLiveOrNew``); a create
    is an update of an empty ``old``. An update that takes no field leaves its manager's entry's
    ``time`` and ``apiVersion`` as they were (``managedfieldsupdater.go``: only an operation that
    took fields stamps the time), so a no-op PUT stays a no-op. A map the update adds is a member
    itself (``.``): Go maps (``additionalProperties``) of built-in kinds, every object of an ``unstructured`` custom
    resource (a Go pointer-to-struct that appears is not told apart from a struct: no ``.``)."""
    supplied = (new.get("metadata") or {}).get("managedFields")
    entries = _entries(new) if isinstance(supplied, list) and supplied else _entries(old)
    before = field_set(old, schema, resolve, strip_status=strip_status)
    after = field_set(new, schema, resolve, strip_status=strip_status)
    changed = {p for p in after if p not in before or _value(old, p) != _value(new, p)}
    changed |= _added_maps(old, new, schema, resolve, (), unstructured=unstructured, strip_status=strip_status)
    removed = before - after
    out = []
    mine: set[Path] = set()
    previous: dict[str, Any] | None = None
    for e in entries:
        owned = decode_fields(e.get("fieldsV1"))
        if _same_manager(e, manager, "Update", subresource):
            mine, previous = owned, e
            continue
        owned = owned - changed - removed
        if owned:
            out.append({**e, "fieldsV1": encode_fields(owned)})
    mine = (mine | changed) - removed
    if mine:
        if changed or previous is None:
            out.append(_entry(manager, "Update", api_version, now, mine, subresource))
        else:  # the update took no field: its manager's entry keeps its time and version
            out.append({**previous, "fieldsV1": encode_fields(mine)})
    new.setdefault("metadata", {})["managedFields"] = _order(out)


_NULL = object()
"""A required field absent from the old object: Go encodes it (``null``), so it is not added."""


def _added_maps(old: Any, new: Any, s: Schema, resolve: Resolver, path: Path, *, unstructured: bool,
                strip_status: bool = False) -> set[Path]:
    """The map and granular list nodes of ``new`` absent from ``old`` that are fields themselves (see
    :func:`track_update`)."""
    out: set[Path] = set()
    if isinstance(new, dict) and (s or {}).get("x-kubernetes-map-type") != "atomic":
        if path and not isinstance(old, dict) and new and (
                unstructured or (isinstance((s or {}).get("additionalProperties"), dict)
                                 and not (s or {}).get("properties"))):
            out.add(path)
        for k, v in new.items():
            if not path and (k in ("apiVersion", "kind") or (k == "status" and strip_status)):
                continue
            cs = _child(s, k, resolve)
            o = old.get(k) if isinstance(old, dict) else None
            if o is None and isinstance(v, list) and k in ((s or {}).get("required") or ()):
                o = _NULL
            if not path and k == "metadata" and isinstance(v, dict):
                for mk, mv in v.items():
                    if mk not in STRIP_META:
                        out |= _added_maps(o.get(mk) if isinstance(o, dict) else None, mv, _child(cs, mk, resolve),
                                           resolve, ("f:metadata", f"f:{mk}"), unstructured=unstructured)
                continue
            out |= _added_maps(o, v, cs, resolve, (*path, f"f:{k}"), unstructured=unstructured)
    elif isinstance(new, list):
        lt, keys = _list_type(s)
        item_s = _items(s, resolve)
        if path and new and old is not _NULL and not old and lt in ("map", "set"):
            # a granular list that appears is a member: an ``omitempty`` Go slice (nil and empty
            # alike omitted); a required one (``containers``) is ``null`` in the empty object
            out.add(path)
        if lt == "map" and keys and all(isinstance(i, dict) for i in new):
            olds = {_key_element(i, keys, item_s): i for i in old if isinstance(i, dict)} \
                if isinstance(old, list) else {}
            for item in new:
                ke = _key_element(item, keys, item_s)
                out |= _added_maps(olds.get(ke), item, item_s, resolve, (*path, ke), unstructured=unstructured)
    return out
