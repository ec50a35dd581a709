"""ImageLocality: cases ported from upstream image_locality_test.go (v1.34; image volumes from
v1.36.3 and v1.37.2), and batch == per-node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.plugins import imagelocality
from kubesched.plugins.imagelocality import MB, calculate_priority, normalized_image_name
from kubesched.testing.wrappers import MakeNode, MakePod, build_table


def _node(name, *images):
    b = MakeNode().name(name)
    for img, size in images:
        b.image(size, img)
    return b.obj()


NODE_403002000 = ("machine1", ("gcr.io/40:latest", 40 * MB), ("gcr.io/300:latest", 300 * MB),
                  ("gcr.io/2000:latest", 2000 * MB))
NODE_25010 = ("machine2", ("gcr.io/250:latest", 250 * MB), ("gcr.io/10:latest", 10 * MB))
NODE_60040900 = ("machine1", ("gcr.io/600:latest", 600 * MB), ("gcr.io/40:latest", 40 * MB),
                 ("gcr.io/900:latest", 900 * MB))
NODE_300600900 = ("machine2", ("gcr.io/300:latest", 300 * MB), ("gcr.io/600:latest", 600 * MB),
                  ("gcr.io/900:latest", 900 * MB))
NODE_400030 = ("machine1", ("gcr.io/4000:latest", 4000 * MB), ("gcr.io/30:latest", 30 * MB))
NODE_NONE = ("machine3",)


def _pod(*images, init=()):
    b = MakePod()
    for i in init:
        b.container(i, init=True)
    for i in images:
        b.container(i)
    return b.obj()


CASES = [
    # 40MB*1/2 = 20MB < 23MB → 0; 250MB*1/2 = 125MB → 100*(125-23)/(2000-23) = 5
    ("two images spread on two nodes, prefer the larger image one",
     _pod("gcr.io/40", "gcr.io/250"), [NODE_403002000, NODE_25010], [0, 5]),
    # (40+300)/2 = 170MB → 100*(170-23)/1977 = 7
    ("two images on one node, prefer this node", _pod("gcr.io/40", "gcr.io/300"), [NODE_403002000, NODE_25010], [7, 0]),
    # 4000/2 = 2000MB clamped to 2000 → 100; 10/2 = 5 → 0
    ("if exceed limit, use limit", _pod("gcr.io/10", "gcr.io/4000"), [NODE_400030, NODE_25010], [100, 0]),
    # 40/3 → 0 ; 250/3 = 83.3MB → 3
    ("spread images across 3 nodes", _pod("gcr.io/40", "gcr.io/250"), [NODE_403002000, NODE_25010, NODE_NONE],
     [0, 3, 0]),
    # m1: 600*2/3 + 900*2/3 = 1000MB → 32; m2: 300/3 + 400 + 600 = 1100MB → 36 (max 3000MB)
    ("pod with multiple large images, node2 is preferred", _pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     [NODE_60040900, NODE_300600900, NODE_NONE], [32, 36, 0]),
    # init container images count too, and the container count includes init containers
    ("init container images are included", _pod("gcr.io/10", init=("gcr.io/2000",)),
     [NODE_403002000, NODE_25010, NODE_NONE],
     [calculate_priority(int(2000 * MB * (1 / 3)), 2), calculate_priority(int(10 * MB * (1 / 3)), 2), 0]),
    ("no image anywhere", _pod("gcr.io/none"), [NODE_403002000, NODE_25010], [0, 0]),
]


@pytest.mark.parametrize("name,pod,nodes,want", CASES, ids=[c[0] for c in CASES])
def test_score(name, pod, nodes, want):
    t = build_table([_node(*n) for n in nodes])
    pl = imagelocality.new(None, Handle(nodes=t))
    rows = np.asarray([t.row_of[n[0]] for n in nodes], np.int64)
    state = CycleState()
    per_node = [pl.score(state, pod, t.node_info(r))[0] for r in rows.tolist()]
    assert per_node == want
    assert pl.score_nodes(state, pod, t, rows).tolist() == want


def _image_volume_pod(*images, volumes=()):
    b = MakePod()
    for i in images:
        b.container(i)
    b.spec(volumes=[{"name": f"iv{k}", "image": {"reference": ref}} for k, ref in enumerate(volumes)])
    return b.obj()


# upstream "pod with ImageVolume" (container gcr.io/30, image volume gcr.io/300) on node1 = 300/600/900MB
# images, node2 = 4000MB + 30MB images, per version:
#   1.37.2: 300M * 1/2 = 150M of 1000M * 2 (the volume counts) → 6; node2 30M/2 < 23M → 0
#   1.36.3: the volume adds to the sum only: 150M of 1000M → 12
#   1.34/1.35: image volumes are ignored → 0
IMAGE_VOLUME = [((1, 34), [0, 0]), ((1, 35), [0, 0]), ((1, 36), [12, 0]), ((1, 37), [6, 0])]


@pytest.mark.parametrize(("version", "want"), IMAGE_VOLUME, ids=[f"{v[0]}.{v[1]}" for v, _ in IMAGE_VOLUME])
def test_image_volumes(version, want):
    nodes = [("node1", *NODE_300600900[1:]), ("node2", *NODE_400030[1:])]
    t = build_table([_node(*n) for n in nodes])
    pl = imagelocality.new(None, Handle(nodes=t, features=FeatureGate(emulated_version=version)))
    pod = _image_volume_pod("gcr.io/30", volumes=("gcr.io/300",))
    rows = np.asarray([t.row_of["node1"], t.row_of["node2"]], np.int64)
    per_node = [pl.score(CycleState(), pod, t.node_info(r))[0] for r in rows.tolist()]
    assert per_node == want
    assert pl.score_nodes(CycleState(), pod, t, rows).tolist() == want


def test_same_images_as_containers_score_like_the_image_volume_pod_at_1_37():
    """Upstream "same images as ImageVolume pod but as regular container images": 6 / 0."""
    nodes = [("node1", *NODE_300600900[1:]), ("node2", *NODE_400030[1:])]
    t = build_table([_node(*n) for n in nodes])
    pl = imagelocality.new(None, Handle(nodes=t, features=FeatureGate(emulated_version=(1, 37))))
    pod = _pod("gcr.io/30", "gcr.io/300")
    assert [pl.score(CycleState(), pod, t.node_info(t.row_of[n]))[0] for n in ("node1", "node2")] == [6, 0]


def test_constants_and_normalisation():
    assert imagelocality.MIN_THRESHOLD == 23 * 1024 * 1024
    assert imagelocality.MAX_CONTAINER_THRESHOLD == 1000 * 1024 * 1024
    assert normalized_image_name("gcr.io/10") == "gcr.io/10:latest"
    assert normalized_image_name("localhost:5000/foo") == "localhost:5000/foo:latest"
    assert normalized_image_name("gcr.io/10:v1") == "gcr.io/10:v1"
    assert calculate_priority(0, 1) == 0 and calculate_priority(10**12, 1) == 100


def test_duplicate_images_count_per_container():
    t = build_table([_node("m1", ("gcr.io/500:latest", 500 * MB)), _node("m2")])
    pl = imagelocality.new(None, Handle(nodes=t))
    pod = _pod("gcr.io/500", "gcr.io/500")
    # 2 × 250MB = 500MB of 2000MB → 100*(500-23)/(2000-23) = 24
    assert pl.score(CycleState(), pod, t.node_info(t.row_of["m1"]))[0] == 24
    assert pl.score_nodes(CycleState(), pod, t, t.order()).tolist()[0] == 24


def test_cache_invalidated_on_node_changes():
    t = build_table([_node("m1", ("gcr.io/500:latest", 500 * MB)), _node("m2")])
    pl = imagelocality.new(None, Handle(nodes=t))
    pod = _pod("gcr.io/500")
    before = pl.score_nodes(CycleState(), pod, t, t.order()).tolist()
    t.set_node(_node("m2", ("gcr.io/500:latest", 500 * MB)))
    after = pl.score_nodes(CycleState(), pod, t, t.order()).tolist()
    ref = [pl.score(CycleState(), pod, t.node_info(r))[0] for r in t.order().tolist()]
    assert after == ref and after != before
    t.remove_node("m1")
    assert pl.score_nodes(CycleState(), pod, t, t.order()).tolist() == \
        [pl.score(CycleState(), pod, t.node_info(r))[0] for r in t.order().tolist()]


_IMAGES = ["gcr.io/a", "gcr.io/b:v1", "docker.io/c", "gcr.io/d@sha256:abc"]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(node_imgs=st.lists(st.dictionaries(st.sampled_from(_IMAGES), st.integers(0, 3000 * MB), max_size=4),
                          min_size=1, max_size=10),
       pod_imgs=st.lists(st.sampled_from(_IMAGES + ["gcr.io/zzz"]), min_size=1, max_size=4),
       n_init=st.integers(0, 2), vol_imgs=st.lists(st.sampled_from(_IMAGES + ["gcr.io/zzz"]), max_size=2),
       version=st.sampled_from([(1, 34), (1, 36), (1, 37)]))
def test_batch_equals_per_node(node_imgs, pod_imgs, n_init, vol_imgs, version):
    nodes = [_node(f"n{i}", *[(normalized_image_name(k), v) for k, v in imgs.items()]) for i, imgs in enumerate(node_imgs)]
    t = build_table(nodes)
    pl = imagelocality.new(None, Handle(nodes=t, features=FeatureGate(emulated_version=version)))
    pod = _pod(*pod_imgs[n_init:] or pod_imgs, init=tuple(pod_imgs[:n_init]))
    if vol_imgs:
        pod.spec.volumes = _image_volume_pod(volumes=vol_imgs).spec.volumes
    rows = t.order()
    ref = [pl.score(CycleState(), pod, t.node_info(r))[0] for r in rows.tolist()]
    assert pl.score_nodes(CycleState(), pod, t, rows).tolist() == ref


def test_cached_scores_follow_node_changes():
    """The per-row scores kept across cycles are recomputed when a node is added, updated or
    removed (the node count and the nodes holding an image both change the score)."""
    a, b = normalized_image_name("gcr.io/a"), normalized_image_name("gcr.io/b:v1")
    nodes = [_node("n0", (a, 900 * MB)), _node("n1"), _node("n2", (b, 500 * MB))]
    t = build_table(nodes)
    pl = imagelocality.new(None, Handle(nodes=t))
    pod = _pod("gcr.io/a", "gcr.io/b:v1")

    def check():
        rows = t.order()
        ref = [pl.score(CycleState(), pod, t.node_info(r))[0] for r in rows.tolist()]
        assert pl.score_nodes(CycleState(), pod, t, rows).tolist() == ref
        return ref

    first = check()
    t.set_node(_node("n1", (a, 2000 * MB)))  # update: n1 now has the image
    assert check() != first
    t.set_node(_node("n3", (b, 1500 * MB)))  # add
    check()
    t.remove_node("n0")
    check()
    t.set_node(_node("n2"))  # update: the image leaves n2
    check()
