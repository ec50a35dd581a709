"""Load a realistic cluster dump (``kubectl get ... -A -o yaml``) and print the time and peak memory.

    PYTHONPATH=src python benchmarks/dump_load.py                 # 500 nodes, 10,000 pods, YAML (~36 MB)
    PYTHONPATH=src python benchmarks/dump_load.py --format json
    PYTHONPATH=src python benchmarks/dump_load.py --nodes 50 --pods 1000 --keep /tmp/dump.yaml

The dump comes from :mod:`kubesched.testing.dump` (full status, managedFields, ownerReferences).
Timed: ``kubesched.sim.manifests.load_manifests`` (parse + per-object checks) and then the
input validation ``kubesched simulate`` applies (:mod:`kubesched.sim.validate`), separately.
Peak RSS is the process's (``ru_maxrss``), the generator included, so it is printed before and after;
CPU time is printed next to wall time because the figures are taken on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

from kubesched.sim.manifests import load_manifests
from kubesched.testing.dump import write_dump


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--format", choices=["yaml", "json"], default="yaml")
    ap.add_argument("--keep", help="write the dump here (and reuse it if it exists)")
    args = ap.parse_args()
    path = args.keep or os.path.join(tempfile.mkdtemp(), f"dump.{args.format}")
    if not os.path.exists(path):
        t = time.perf_counter()
        size = write_dump(path, args.nodes, args.pods, fmt=args.format)
        print(f"generated {path}: {size / 1e6:.1f} MB in {time.perf_counter() - t:.1f} s")
    else:
        print(f"reusing {path}: {os.path.getsize(path) / 1e6:.1f} MB")
    rss0 = _rss_mb()
    t, c = time.perf_counter(), time.process_time()
    raws = load_manifests([path])
    print(f"load_manifests: {len(raws)} objects in {time.perf_counter() - t:.2f} s wall, "
          f"{time.process_time() - c:.2f} s CPU; peak RSS {rss0:.0f} -> {_rss_mb():.0f} MB")
    try:
        from kubesched.sim.validate import validate_inputs
    except ImportError:
        return
    t, c = time.perf_counter(), time.process_time()
    validate_inputs(raws)
    print(f"validate_inputs: {time.perf_counter() - t:.2f} s wall, {time.process_time() - c:.2f} s CPU")


if __name__ == "__main__":
    main()
