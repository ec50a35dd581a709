"""The sweep spec (``kind: Sweep``) and its expansion into runs.

A spec is YAML or JSON::

    apiVersion: kubesched.io/v1alpha1
    kind: Sweep
    name: packing                       # names the study in the summary and the page
    inputs:                             # each a manifest set (as simulate -f) or a trace (as replay)
      - name: quickstart
        files: [../quickstart]          # files or directories, relative to the spec file
      - name: openb
        trace: alibaba-openb            # nodes/pods CSVs as `kubesched replay alibaba-openb`
        nodes: openb_node_list_all_node.csv
        pods: openb_pod_list_default.csv
        limit: 1000                     # the first N pods by creation time (optional)
        nodeLimit: 200                  # the first N nodes of the node list (optional)
        loadFactor: [1, 50]             # arrivals N× faster, lifetimes kept; a list = one input each
    configs:
      base: base-config.yaml            # a KubeSchedulerConfiguration file, inline, or none (defaults)
      grid:                             # the cartesian product of the parameters (or `list:` variants)
        - name: strategy
          path: profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type
          values: [LeastAllocated, MostAllocated]
        - name: spread
          values:                       # label → patch (field path → value; null deletes)
            "on": {}
            "off": {"profiles[0].plugins.score.disabled[PodTopologySpread]": {}}
    seeds: [1, 2, 3]
    metrics: [pending, util_cpu, gpu_stranded]   # default: all of METRICS
    emulatedVersion: "1.37"             # optional, as --emulated-version; featureGates: [K=V, ...]

A field path is dot-separated keys; ``[N]`` indexes a list (``N`` = its length appends), and
``[Name]`` picks the list element whose ``name`` (``schedulerName`` in ``profiles``) is Name,
adding ``{name: Name}`` when there is none (an object set there keeps that ``name``). Patches
apply to the configuration as written (before defaulting), so ``plugins`` follow upstream's
merge with the default plugins.

Every spec error raises :class:`~kubesched.errors.InputError` with ``SPEC: field.path``; each
configuration variant is decoded, defaulted and validated here, before anything runs, and a
bad one is reported with the variant and the configuration's own field path.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec

from kubesched import __version__
from kubesched.config import API_VERSION, KIND, decode_config, strict_convert
from kubesched.errors import ConfigError, InputError
from kubesched.features import FeatureGate

__all__ = ["METRICS", "Plan", "Run", "SweepSpec", "apply_patch", "load_spec", "set_path"]

SPEC_API_VERSION = "kubesched.io/v1alpha1"
SPEC_KIND = "Sweep"

#: metric → (direction of "better": ``max`` / ``min`` / ``""`` for text, description)
METRICS: dict[str, tuple[str, str]] = {
    "scheduled": ("max", "pods the scheduler bound during the run"),
    "pending": ("min", "pods left unscheduled (a trace: never scheduled)"),
    "preemptions": ("min", "pods preempted (deleted as victims)"),
    "attempts": ("min", "scheduling attempts"),
    "util_cpu": ("max", "requested ÷ allocatable cpu over all nodes (a trace: time-weighted)"),
    "util_memory": ("max", "requested ÷ allocatable memory (a trace: time-weighted)"),
    "util_gpu": ("max", "requested ÷ allocatable nvidia.com/gpu (a trace: time-weighted)"),
    "nodes_used": ("min", "nodes running at least one pod (at the end)"),
    "node_skew": ("min", "max − min pods per node (at the end)"),
    "zone_skew": ("min", "max − min pods per topology.kubernetes.io/zone (at the end)"),
    "gpu_nodes_partial": ("min", "GPU nodes partly used: 0 < GPUs requested < allocatable (a trace: time-weighted)"),
    "gpu_stranded": ("min", "free GPUs on partly used GPU nodes ÷ all GPUs (a trace: time-weighted)"),
    "wait_mean_s": ("min", "a trace: mean virtual seconds from arrival to bind"),
    "wait_p99_s": ("min", "a trace: 99th percentile of the wait"),
    "run_cpu_s": ("min", "CPU seconds of the run (scheduling time)"),
    "run_wall_s": ("min", "wall seconds of the run"),
    "pending_reasons": ("", "pending pods per FailedScheduling reason (JSON)"),
}


class _Strict(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    pass


class InputSpec(_Strict, kw_only=True):
    """One input: ``files`` (a ``-f`` set) or ``trace`` + ``nodes`` + ``pods``."""

    name: str
    files: list[str] = []
    trace: Literal["alibaba-openb"] | None = None
    nodes: str | None = None
    pods: str | None = None
    limit: Annotated[int, msgspec.Meta(ge=1)] | None = None
    node_limit: Annotated[int, msgspec.Meta(ge=1)] | None = None
    load_factor: Annotated[float, msgspec.Meta(gt=0)] | list[Annotated[float, msgspec.Meta(gt=0)]] = 1.0


class Parameter(_Strict, kw_only=True):
    """A grid dimension: ``path`` + a list of values, or labelled values / patches."""

    name: str
    values: list[Any] | dict[str, Any]
    path: str | None = None


class Variant(_Strict, kw_only=True):
    name: str
    patch: dict[str, Any] = {}


class Configs(_Strict, kw_only=True):
    base: str | dict[str, Any] | None = None
    grid: list[Parameter] = []
    variants: list[Variant] = msgspec.field(default_factory=list, name="list")


class SweepSpec(_Strict, kw_only=True):
    api_version: str = SPEC_API_VERSION
    kind: str = SPEC_KIND
    name: str = "sweep"
    inputs: list[InputSpec]
    configs: Configs = msgspec.field(default_factory=Configs)
    seeds: list[int] = msgspec.field(default_factory=lambda: [0])
    metrics: list[str] = []
    emulated_version: str | None = None
    feature_gates: list[str] = []


@dataclass
class Input:
    """An input as the runs see it: ``kind`` ``files`` or ``trace``; ``paths`` absolute."""

    name: str
    kind: str
    paths: list[str]
    limit: int | None = None
    node_limit: int | None = None
    load_factors: list[float] = field(default_factory=lambda: [1.0])
    where: str = ""
    """``inputs[i]``: the spec field, for errors."""


@dataclass
class ConfigVariant:
    label: str
    params: dict[str, str]
    config: dict[str, Any]
    """The configuration as written (patched), before defaulting."""


@dataclass
class Run:
    """One run: an input (at a load factor) × a configuration × a seed; ``key`` its hash."""

    input: str
    load_factor: float
    config: str
    params: dict[str, str]
    seed: int
    key: str = ""

    @property
    def input_label(self) -> str:
        return self.input if self.load_factor == 1.0 else f"{self.input}×{self.load_factor:g}"


@dataclass
class Plan:
    """A loaded spec: the inputs, the configuration variants and every run."""

    spec: SweepSpec
    path: str
    inputs: list[Input]
    variants: list[ConfigVariant]
    runs: list[Run]
    metrics: list[str]
    parameters: list[str]

    def variant(self, label: str) -> ConfigVariant:
        return next(v for v in self.variants if v.label == label)

    def features(self) -> FeatureGate:
        return FeatureGate.from_flags(self.spec.emulated_version, list(self.spec.feature_gates))


# ───────────────────────────── field paths ─────────────────────────────

_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]|(\.)")


def parse_path(path: str) -> list[str | int | tuple[str]]:
    """``a.b[0].c[Name]`` → ``["a", "b", 0, "c", ("Name",)]`` (a tuple = select by name).
    Raises ValueError for a malformed path."""
    out: list[str | int | tuple[str]] = []
    pos, want_key = 0, True
    if not path:
        raise ValueError("empty field path")
    for m in _TOKEN.finditer(path):
        if m.start() != pos:
            raise ValueError(f"unexpected {path[pos:m.start()]!r} at {pos}")
        pos = m.end()
        key, sel, dot = m.groups()
        if dot:
            if want_key:
                raise ValueError(f"empty key at {m.start()}")
            want_key = True
        elif key is not None:
            if not want_key:
                raise ValueError(f"missing '.' before {key!r}")
            out.append(key)
            want_key = False
        else:
            if want_key or not sel:
                raise ValueError(f"'[{sel}]' must follow a key")
            out.append(int(sel) if sel.isdigit() else (sel,))
    if pos != len(path) or want_key:
        raise ValueError("a path ends with a key or ']'")
    return out


def _select(lst: list[Any], name: str, list_key: str, create: bool) -> int | None:
    attr = "schedulerName" if list_key == "profiles" else "name"
    for i, item in enumerate(lst):
        if isinstance(item, dict) and item.get(attr) == name:
            return i
    if not create:
        return None
    lst.append({attr: name})
    return len(lst) - 1


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set (``value`` None: delete) the field at ``path`` in ``doc``, creating what is missing.
    Raises ValueError naming the problem."""
    tokens = parse_path(path)
    cur: Any = doc
    last_key = ""
    for i, tok in enumerate(tokens):
        final = i == len(tokens) - 1
        delete = final and value is None
        nxt = None if final else tokens[i + 1]
        empty: Any = [] if isinstance(nxt, (int, tuple)) else {}
        if isinstance(tok, str):
            if not isinstance(cur, dict):
                raise ValueError(f"{tok!r}: not an object here")
            if final:
                if delete:
                    cur.pop(tok, None)
                else:
                    cur[tok] = value
                return
            if cur.get(tok) is None:
                cur[tok] = empty
            cur, last_key = cur[tok], tok
            continue
        if not isinstance(cur, list):
            raise ValueError(f"{last_key!r} is not a list")
        if isinstance(tok, int):
            if tok > len(cur):
                raise ValueError(f"index {tok} beyond the {len(cur)} element(s) of {last_key!r}")
            idx: int | None = tok
            if tok == len(cur) and not delete:
                cur.append(empty if not final else value)
                if final:
                    return
        else:
            idx = _select(cur, tok[0], last_key, create=not delete)
        if delete:
            if idx is not None and idx < len(cur):
                del cur[idx]
            return
        assert idx is not None
        if final:
            if isinstance(tok, tuple) and isinstance(value, dict):  # the element selected by name keeps it
                attr = "schedulerName" if last_key == "profiles" else "name"
                value = {attr: tok[0], **value}
            cur[idx] = value
            return
        if cur[idx] is None:
            cur[idx] = empty
        cur = cur[idx]


def apply_patch(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``doc`` with every ``path: value`` of ``patch`` set, in order."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(doc))
    for path, value in patch.items():
        set_path(out, path, msgspec.json.decode(msgspec.json.encode(value)))
    return out


# ───────────────────────────── loading ─────────────────────────────

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _expand(path: str, base_dir: str) -> str:
    """``${VAR}`` / ``${VAR:-default}`` expanded, ``~`` expanded, relative to ``base_dir``."""
    path = _ENV.sub(lambda m: os.environ.get(m.group(1)) or (m.group(2) or ""), path)
    path = os.path.expanduser(path)
    return os.path.normpath(os.path.join(base_dir, path))


def _read_yaml(path: str) -> Any:
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text: {e.reason}", path) from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else path
        raise InputError(f"invalid YAML: {e.problem or e.context or e}", where) from None
    except yaml.YAMLError as e:
        raise InputError(f"invalid YAML: {e}", path) from None


def load_spec(path: str) -> Plan:
    """Read, check and expand the spec at ``path`` (see the module docstring).

    Raises:
        InputError: ``SPEC: field.path: message`` for any problem of the spec or of a
            configuration variant (input files are read later, by :func:`kubesched.sweep.inputs`).
    """
    doc = _read_yaml(path)
    if not isinstance(doc, dict):
        raise InputError(f"expected a {SPEC_KIND} object, got {type(doc).__name__ if doc is not None else 'nothing'}",
                         path)
    try:
        spec = strict_convert(doc, SweepSpec, "")
    except ConfigError as e:
        field_path = e.path or ""
        m = re.fullmatch(r'unknown field "(.+)"', e.message)
        if m:  # name the unknown field itself, not the object holding it
            field_path = f"{field_path}.{m.group(1)}" if field_path else m.group(1)
        raise InputError(e.message, f"{path}: {field_path}" if field_path else path) from None
    if spec.api_version != SPEC_API_VERSION:
        raise InputError(f"unsupported value {spec.api_version!r}: expected {SPEC_API_VERSION!r}",
                         f"{path}: apiVersion")
    if spec.kind != SPEC_KIND:
        raise InputError(f"unsupported value {spec.kind!r}: expected {SPEC_KIND!r}", f"{path}: kind")
    where = _where_in(path)
    base_dir = os.path.dirname(os.path.abspath(path))
    inputs = _inputs(spec, base_dir, where)
    if not spec.seeds:
        raise InputError("give at least one seed", where("seeds"))
    if len(set(spec.seeds)) != len(spec.seeds):
        raise InputError("duplicate seed", where("seeds"))
    metrics = list(spec.metrics) or list(METRICS)
    for i, m in enumerate(metrics):
        if m not in METRICS:
            raise InputError(f"unknown metric {m!r}; known: {', '.join(METRICS)}", where(f"metrics[{i}]"))
    try:
        features = FeatureGate.from_flags(spec.emulated_version, list(spec.feature_gates))
    except ConfigError as e:
        raise InputError(e.message, where("emulatedVersion/featureGates")) from None
    variants, parameters = _variants(spec, base_dir, where, features)
    runs: list[Run] = []
    for inp in inputs:
        for lf in inp.load_factors:
            for v in variants:
                for seed in spec.seeds:
                    runs.append(Run(inp.name, lf, v.label, v.params, seed))
    return Plan(spec, os.path.abspath(path), inputs, variants, runs, metrics, parameters)


def _where_in(spec_path: str) -> Callable[[str], str]:
    """``field`` → ``SPEC: field`` (the location an error names)."""
    return lambda f: f"{spec_path}: {f}"


def _inputs(spec: SweepSpec, base_dir: str, where: Callable[[str], str]) -> list[Input]:
    if not spec.inputs:
        raise InputError("give at least one input", where("inputs"))
    out: list[Input] = []
    names: set[str] = set()
    for i, s in enumerate(spec.inputs):
        w = f"inputs[{i}]"
        if not s.name or s.name in names:
            raise InputError("empty name" if not s.name else f"duplicate name {s.name!r}", where(f"{w}.name"))
        names.add(s.name)
        lfs = s.load_factor if isinstance(s.load_factor, list) else [s.load_factor]
        if not lfs or len(set(lfs)) != len(lfs):
            raise InputError("give distinct load factors", where(f"{w}.loadFactor"))
        if s.trace is not None:
            if s.files:
                raise InputError("give files or a trace, not both", where(f"{w}.files"))
            for f in ("nodes", "pods"):
                if not getattr(s, f):
                    raise InputError(f"a trace needs {f}", where(f"{w}.{f}"))
            paths = [_expand(s.nodes or "", base_dir), _expand(s.pods or "", base_dir)]
            out.append(Input(s.name, "trace", paths, s.limit, s.node_limit, [float(x) for x in lfs], w))
        else:
            if not s.files:
                raise InputError("give files (manifests, as simulate -f) or a trace", where(f"{w}.files"))
            if s.limit is not None or s.node_limit is not None or lfs != [1.0]:
                raise InputError("limit, nodeLimit and loadFactor apply to traces only", where(f"{w}.loadFactor"))
            out.append(Input(s.name, "files", [_expand(p, base_dir) for p in s.files], where=w))
    return out


def _base_config(configs: Configs, base_dir: str, where: Callable[[str], str]) -> dict[str, Any]:
    base = configs.base
    if base is None:
        return {"apiVersion": API_VERSION, "kind": KIND}
    if isinstance(base, str):
        p = _expand(base, base_dir)
        doc = _read_yaml(p)
        if not isinstance(doc, dict):
            raise InputError("expected a KubeSchedulerConfiguration object", where("configs.base"))
        return doc
    return dict(base)


def _variants(spec: SweepSpec, base_dir: str, where: Callable[[str], str],
              features: FeatureGate) -> tuple[list[ConfigVariant], list[str]]:
    c = spec.configs
    base = _base_config(c, base_dir, where)
    if c.grid and c.variants:
        raise InputError("give a grid or a list of variants, not both", where("configs"))
    dims: list[list[tuple[str, dict[str, Any], str]]] = []
    names: list[str] = []
    if c.variants:
        seen: set[str] = set()
        dim = []
        for i, v in enumerate(c.variants):
            if not v.name or v.name in seen:
                raise InputError("empty name" if not v.name else f"duplicate name {v.name!r}",
                                 where(f"configs.list[{i}].name"))
            seen.add(v.name)
            dim.append((v.name, v.patch, f"configs.list[{i}].patch"))
        dims.append(dim)
        names.append("config")
    for i, p in enumerate(c.grid):
        w = f"configs.grid[{i}]"
        if not p.name or p.name in names:
            raise InputError("empty name" if not p.name else f"duplicate name {p.name!r}", where(f"{w}.name"))
        names.append(p.name)
        dim = []
        if not p.values:
            raise InputError("give at least one value", where(f"{w}.values"))
        if p.path is not None:
            try:
                parse_path(p.path)
            except ValueError as e:
                raise InputError(f"invalid field path: {e}", where(f"{w}.path")) from None
            items = p.values.items() if isinstance(p.values, dict) else ((_label(v), v) for v in p.values)
            for j, (label, value) in enumerate(items):
                dim.append((label, {p.path: value}, f"{w}.values[{j}]"))
        else:
            if not isinstance(p.values, dict):
                raise InputError("without a path, values are label → patch (a mapping)", where(f"{w}.values"))
            for label, patch in p.values.items():
                if patch is None:
                    patch = {}
                if not isinstance(patch, dict):
                    raise InputError("expected a patch (field path → value)", where(f"{w}.values.{label}"))
                dim.append((label, patch, f"{w}.values.{label}"))
        if len({d[0] for d in dim}) != len(dim):
            raise InputError("two values with the same label", where(f"{w}.values"))
        dims.append(dim)
    if not dims:
        dims, names = [[("default", {}, "configs")]], ["config"]
    out: list[ConfigVariant] = []
    for combo in itertools.product(*dims):
        doc = base
        for _, patch, w in combo:
            try:
                doc = apply_patch(doc, patch)
            except ValueError as e:
                raise InputError(f"cannot apply: {e}", where(w)) from None
        params = {n: lab for n, (lab, _, _) in zip(names, combo)}
        label = ",".join(f"{n}={lab}" for n, lab in params.items()) if names != ["config"] else params["config"]
        try:
            decode_config(doc, source=label, features=features)
        except ConfigError as e:
            raise InputError(e.message, where(f"configs ({label})") + (f": {e.path}" if e.path else "")) from None
        out.append(ConfigVariant(label, params, doc))
    return out, names


def _label(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, int, float)):
        return str(v)
    return msgspec.json.encode(v).decode()


def run_key(payload_digest: str, run: Run, config: dict[str, Any], spec: SweepSpec) -> str:
    """The hash that names a run's result: what the run reads (input digest, load factor,
    configuration, seed, emulated version and gates) and the kubesched version."""
    ident = {"input": payload_digest, "loadFactor": run.load_factor, "config": config, "seed": run.seed,
             "emulatedVersion": spec.emulated_version, "featureGates": list(spec.feature_gates),
             "kubesched": __version__}
    return hashlib.sha256(msgspec.json.encode(ident, order="sorted")).hexdigest()[:20]
