"""Python calls per pod of ``e2e_upstream.py --shape gang``'s scheduler work, in process (no API
server, so the figure is load-independent; issue 18 §1 gang row): ``--nodes`` nodes (4 cpu, 32Gi,
110 pods), ``--groups`` PodGroups of ``--size`` members each (gang ``minCount`` = size; pods
100m / 500Mi), GenericWorkload + TopologyAwareWorkloadScheduling + PodGroupPreemptionPolicy, the
default profile, scheduled by a ``Scheduler`` on the simulator's store. cProfile counts, per pod,
the informer adds of the pods (queue, PreEnqueue of every member) and the scheduling + binding of
all of them, separately. Prints figures; not a test.

    PYTHONPATH=src python benchmarks/gang_calls.py [--nodes 5000] [--groups 100] [--size 10] [--profile P.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

from kubesched.features import FeatureGate
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, "PodGroupPreemptionPolicy": True}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--groups", type=int, default=100)
    ap.add_argument("--size", type=int, default=10, help="members per PodGroup (= gang minCount)")
    ap.add_argument("--profile", help="write the scheduling half's cProfile stats here")
    a = ap.parse_args()
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, features=FeatureGate(overrides=GATES))
    store.scheduler = sched
    for i in range(a.nodes):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu="4", memory="32Gi", pods="110").obj())
    for g in range(a.groups):
        store.put_object("PodGroup", {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                      "metadata": {"name": f"g{g}", "namespace": "default", "resourceVersion": "1"},
                                      "spec": {"schedulingPolicy": {"gang": {"minCount": a.size}}}})
    store.flush()
    pods = [MakePod().name(f"p{g}-{m}").uid(f"p{g}-{m}").req(cpu="100m", memory="500Mi")
            .spec(schedulingGroup={"podGroupName": f"g{g}"}).obj() for g in range(a.groups) for m in range(a.size)]
    n = len(pods)
    prof = cProfile.Profile()
    prof.enable()
    for p in pods:
        store.add("Pod", p)
    store.flush()
    prof.disable()
    adds = pstats.Stats(prof).total_calls
    prof = cProfile.Profile()
    prof.enable()
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    prof.disable()
    cycles = pstats.Stats(prof).total_calls
    if a.profile:
        prof.dump_stats(a.profile)
    bound = sum(1 for p in store.pods.values() if p.spec.node_name)
    print(f"{a.nodes} nodes, {a.groups} PodGroups x {a.size}: {bound}/{n} bound; Python calls per pod: "
          f"adds {adds / n:.1f}, scheduling + binding {cycles / n:.1f}")


if __name__ == "__main__":
    main()
