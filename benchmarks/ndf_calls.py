"""Python calls per measured pod of scheduler_perf's ``NodeDeclaredFeaturesEnabled`` shape, in
process and load-independent (issue 18 §5, the NodeDeclaredFeatures rows): the workload of
``kubesched.sim.bench_ndf`` (the mock registry of ``--features`` features that every pod with
pod-level resources requires; every node declares all of them) reduced to ``--nodes`` nodes,
``--init`` init pods and ``--pods`` measured pods; cProfile around the measured scheduling loop
only. Prints figures; not a test. For an A/B, run it with ``PYTHONPATH`` pointing at each ``src``.

    PYTHONPATH=src python benchmarks/ndf_calls.py [--features 100] [--nodes 5000] [--init 500] [--pods 2000] [--top N]
"""

from __future__ import annotations

import argparse
import pstats

from kubesched.sim.bench import _CProfile  # start/stop around cProfile, as execute(profiler=) wants
from kubesched.sim.bench_ndf import _workload


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--init", type=int, default=500)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--top", type=int, default=0, help="also print the N functions with the most own time")
    a = ap.parse_args()
    w = _workload(f"{a.nodes}Nodes{a.features}DeclaredFeatures", a.nodes, a.init, a.pods, a.features, None, ())
    prof = _CProfile()
    assert w.runner is not None
    r = w.runner(w, profiler=prof)
    st = pstats.Stats(prof.p)
    print(f"{a.nodes} nodes, {a.features} declared features, {a.pods} measured pods ({r.scheduled} scheduled): "
          f"Python calls per pod {st.total_calls / a.pods:.0f}")  # type: ignore[attr-defined]
    if a.top:
        st.sort_stats("tottime").print_stats(a.top)


if __name__ == "__main__":
    main()
