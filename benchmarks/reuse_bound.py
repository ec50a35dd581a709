"""How much Filter/Score work equal pods could share in ``simulate`` (issue 18 §2): an upper bound.

    python benchmarks/reuse_bound.py --input /tmp/large/input.json    # an input kept by simulate_large.py --keep
    python benchmarks/reuse_bound.py --nodes 5000 --bound 1000 --pending 2000   # simulate_large's generator

Runs ``simulate`` in process and wraps the scheduling cycle's Filter pass
(``kubesched.scheduler.schedule_pod._filter_rows``): for every cycle it records the pod's classes —
spec + status (the ``EquivalenceCache`` key), the same plus namespace and labels, the request vector —
and the node rows the pass evaluated with their ``NodeTable.generation``. It prints how many cycles
have the same class as the previous cycle, how many evaluated rows the previous cycle also evaluated,
and how many an earlier pod of the same class had already evaluated at the same row generation (the
most any per-node reuse could skip). Decisions are the plain path's; nothing is reused.
"""

from __future__ import annotations

import argparse
import collections
import gc
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", metavar="FILE", help="a simulate input (default: generate one)")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--bound", type=int, default=1000)
    ap.add_argument("--pending", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    from kubesched.cli._features import build_features
    from kubesched.cli._inputs import load_inputs
    from kubesched.scheduler import schedule_pod as sp
    from kubesched.sim.simulate import simulate

    with tempfile.TemporaryDirectory() as tmp:
        path = args.input
        if path is None:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from simulate_large import generate

            path = str(Path(tmp) / "input.json")
            Path(path).write_bytes(orjson.dumps(generate(args.nodes, args.bound, args.pending, args.seed)))
        features = build_features(None, (), None)
        gc.disable()
        config, raws, _ = load_inputs([path], None, features)
        gc.freeze()
        gc.enable()

    enc = msgspec.json.Encoder().encode
    stats: collections.Counter[str] = collections.Counter()
    classes: dict[str, collections.Counter[bytes]] = {k: collections.Counter() for k in ("cls", "full", "req")}
    prev: dict[str, Any] = {"cls": None, "full": None, "req": None, "rows": None}
    last_gen: dict[str, dict[bytes, np.ndarray]] = {"cls": {}, "full": {}}
    plain = sp._filter_rows

    def recording(fw: Any, state: Any, pod: Any, diagnosis: Any, rows: np.ndarray, start: int,
                  num_to_find: int) -> Any:
        k0 = len(diagnosis.chunks)
        out = plain(fw, state, pod, diagnosis, rows, start, num_to_find)
        table = fw.handle.nodes
        parts = [c.rows for c in diagnosis.chunks[k0:]]
        ev = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        gens = table.generation[ev]
        meta = pod.metadata
        key = {"cls": enc((pod.spec, pod.status))}
        key["full"] = key["cls"] + enc((meta.namespace, sorted(meta.labels.items())))
        key["req"] = enc(sorted(state.pod_info.requests.items())) if state.pod_info is not None else b""
        stats["cycles"] += 1
        stats["rows"] += len(ev)
        for k in ("cls", "full", "req"):
            classes[k][key[k]] += 1
            stats[f"same_{k}"] += key[k] == prev[k]
        if prev["rows"] is not None and len(ev):
            stats["rows_prev"] += int(np.isin(ev, prev["rows"]).sum())
        cap = table.capacity
        for k in ("cls", "full"):
            a = last_gen[k].get(key[k])
            if a is None or len(a) < cap:
                b = np.full(cap, -1, np.int64)
                if a is not None:
                    b[: len(a)] = a
                a = last_gen[k][key[k]] = b
            stats[f"reuse_{k}"] += int((a[ev] == gens).sum())
            a[ev] = gens
        prev.update(key, rows=ev)
        return out

    sp._filter_rows = recording
    try:
        simulate(raws, config, timings={}, freeze_gc=True, features=features)
    finally:
        sp._filter_rows = plain
    c, r = stats["cycles"], max(stats["rows"], 1)
    print(f"cycles {c}, rows evaluated by the Filter pass {stats['rows']} ({stats['rows'] / max(c, 1):.0f} per cycle)")
    print(f"distinct classes: spec+status {len(classes['cls'])}, +namespace/labels {len(classes['full'])}, "
          f"request vectors {len(classes['req'])}")
    for k, what in (("full", "spec+status+labels"), ("cls", "spec+status"), ("req", "request vector")):
        print(f"cycles with the previous cycle's {what}: {stats[f'same_{k}']} ({stats[f'same_{k}'] / max(c, 1):.1%})")
    print(f"evaluated rows the previous cycle also evaluated: {stats['rows_prev']} ({stats['rows_prev'] / r:.1%})")
    print(f"evaluated rows an earlier pod of the same spec+status evaluated at the same generation: "
          f"{stats['reuse_cls']} ({stats['reuse_cls'] / r:.1%})")
    print(f"... of the same spec+status+namespace+labels: {stats['reuse_full']} ({stats['reuse_full'] / r:.1%})")


if __name__ == "__main__":
    main()
