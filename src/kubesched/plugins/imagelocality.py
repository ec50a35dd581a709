"""ImageLocality (upstream ``pkg/scheduler/framework/plugins/imagelocality``, v1.37.2).

Score only (no NormalizeScore). For a node:

``sum = Σ over the pod's init containers and containers whose (normalised) image the node has
of int64(float64(size) * float64(numNodesWithImage) / float64(totalNumNodes))`` — a container
counts once per container, so an image used by two containers counts twice;
``totalNumNodes`` is the number of nodes in the snapshot (``len(table)``). Then
``sum`` is clamped to ``[minThreshold, maxThreshold]`` with ``minThreshold = 23 MiB`` and
``maxThreshold = 1000 MiB × imageCount`` and
``score = 100 * (sum - minThreshold) / (maxThreshold - minThreshold)`` (integer division).

Image volumes (``volumes[].image.reference``), no feature gate: since v1.36 their images add
to ``sum`` (v1.36.3 ``sumImageScores``); since v1.37 they also count in ``imageCount``
(v1.37.2 image_locality.go L77-78, L111-137); before, ``imageCount`` is
``len(initContainers) + len(containers)`` and image volumes are ignored.

Pod images are normalised like upstream ``normalizedImageName`` (``:latest`` appended when the
last ``:`` is not after the last ``/``); node images come normalised from the NodeTable.

Batch shape: only the pod's few images and the rows that have each are visited; per image the
``(rows, sizes)`` arrays are cached and invalidated by a NodeTable listener on node changes.

Difference from upstream (framework data model): upstream's ``ImageStateSummary.Size`` is the
size reported by the first node that added the image to the cache; kubesched uses each node's
own reported size (``NodeInfo.image_states``). They differ only when nodes report different
sizes for the same image name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.signers import IMAGE_NAMES_SIGNER_NAME

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["MAX_CONTAINER_THRESHOLD", "MB", "MIN_THRESHOLD", "NAME", "ImageLocality", "calculate_priority",
           "new", "normalized_image_name", "pod_images", "scaled_image_score"]

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Upstream ``normalizedImageName``: append ``:latest`` when there is no tag after the last ``/``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_images(pod: Pod, image_volumes_sum: bool = True, image_volumes_count: bool = True) -> tuple[list[str], int]:
    """The normalised image of every init container, container and (``image_volumes_sum``)
    image volume (duplicates kept), and the image count: init + regular containers, plus the
    image volumes with ``image_volumes_count``."""
    names = [normalized_image_name(c.image) for c in pod.spec.init_containers]
    names += [normalized_image_name(c.image) for c in pod.spec.containers]
    count = len(names)
    if image_volumes_sum:
        for v in pod.spec.volumes:
            if v.image is None:
                continue
            names.append(normalized_image_name(v.image.reference))
            if image_volumes_count:
                count += 1
    return names, count


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """``int64(float64(size) * (float64(numNodes) / float64(totalNumNodes)))``."""
    spread = num_nodes / total_num_nodes
    return int(float(size) * spread)


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Upstream ``calculatePriority``: clamp, then scale to 0..100 with integer math."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return _go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


_CACHE_KEY = (__name__, "ImageCache")
_MAX_SCORE_ARRAYS = 64


class _ImageCache:
    """Image name → (rows int64[k], sizes float64[k]); a NodeTable listener drops entries of
    the images of changed nodes."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.entries: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._dense: dict[str, np.ndarray] = {}
        self.scores: dict[tuple[tuple[str, ...], int, int], np.ndarray] = {}
        """(image names, containers, number of nodes) → int64[capacity] final score of every
        row: a pod's score is then one gather (the score of a node depends on the node only)."""
        table.add_listener(self)

    def get(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        e = self.entries.get(name)
        if e is None:
            rows_set = self.table.image_nodes.get(name)
            if not rows_set:
                return None
            rows = np.fromiter(rows_set, np.int64, len(rows_set))
            images = self.table.images
            sizes = np.fromiter((images[r][name] for r in rows.tolist()), np.float64, len(rows))
            e = self.entries[name] = (rows, sizes)
        return e

    def dense(self, name: str) -> tuple[np.ndarray, int] | None:
        """``(float64[>= capacity] sizes by row, 0 where the node lacks the image; number of
        nodes with it)``: a gather by rows instead of a scatter over all the image's nodes."""
        e = self.get(name)
        if e is None:
            return None
        d = self._dense.get(name)
        if d is None or len(d) < self.table.capacity:
            rows, sizes = e
            d = np.zeros(self.table.capacity, np.float64)
            d[rows] = sizes
            self._dense[name] = d
        return d, len(e[0])

    def _drop(self, names: Any) -> None:
        self.scores.clear()
        for n in names:
            self.entries.pop(n, None)
            self._dense.pop(n, None)

    def on_node_set(self, table: NodeTable, row: int, old: Any) -> None:
        if self.scores:
            self.scores.clear()
        if self.entries:
            if old is not None:
                self.entries.clear()
                self._dense.clear()
                self.scores.clear()
            else:
                self._drop(table.images[row])

    def on_node_removed(self, table: NodeTable, row: int, old: Any) -> None:
        self.entries.clear()
        self._dense.clear()
        self.scores.clear()

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        pass

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        pass


class ImageLocality:
    """Score (both shapes). See the module docstring."""

    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 image_locality.go ``SignPod``): the sorted distinct
        normalised images of the containers and init containers."""
        names = {normalized_image_name(c.image) for c in (*pod.spec.containers, *pod.spec.init_containers)}
        return [(IMAGE_NAMES_SIGNER_NAME, sorted(names))], None

    def __init__(self, table: NodeTable | None = None, features: FeatureGate | None = None) -> None:
        if table is not None:
            table.derived(_CACHE_KEY, _ImageCache)  # built now, kept up to date by the table
        features = features if features is not None else default_feature_gate()
        self.image_volumes_sum = features.at_least(1, 36)
        self.image_volumes_count = features.at_least(1, 37)

    def _pod_images(self, state: CycleState, pod: Pod) -> tuple[list[str], int]:
        pi = state.pod_info
        if pi is not None and pi.pod is pod:
            cached = pi.extra.get(NAME)
            if cached is None:
                cached = pi.extra[NAME] = pod_images(pod, self.image_volumes_sum, self.image_volumes_count)
            return cached  # type: ignore[return-value]
        return pod_images(pod, self.image_volumes_sum, self.image_volumes_count)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, None]:
        total = len(node_info.table)
        states = node_info.image_states
        names, n = self._pod_images(state, pod)
        s = 0
        for name in names:
            st = states.get(name)
            if st is not None:
                s += scaled_image_score(st[0], st[1], total)
        return calculate_priority(s, n), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        names, n = self._pod_images(state, pod)
        cache = nodes.derived(_CACHE_KEY, _ImageCache)
        if MAX_CONTAINER_THRESHOLD * n <= MIN_THRESHOLD:
            return self._score_rows(cache, names, n, nodes, rows)
        key = (tuple(names), n, len(nodes))
        scores = cache.scores.get(key)
        if scores is None or len(scores) < nodes.capacity:
            if len(cache.scores) >= _MAX_SCORE_ARRAYS:
                cache.scores.clear()
            scores = cache.scores[key] = self._score_rows(cache, names, n, nodes,
                                                          np.arange(nodes.capacity, dtype=np.int64))
        return scores[rows]

    @staticmethod
    def _score_rows(cache: _ImageCache, names: list[str], n: int, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        total = len(nodes)
        sums: np.ndarray | None = None
        for name in names:
            e = cache.dense(name)
            if e is None:
                continue
            dense, k = e
            # per node as upstream: int64(size * (k / total)), 0 where the node lacks the image
            contrib = (dense[rows] * (k / total)).astype(np.int64)
            sums = contrib if sums is None else sums + contrib
        if sums is None:
            return np.full(len(rows), calculate_priority(0, n), np.int64)
        max_threshold = MAX_CONTAINER_THRESHOLD * n
        if max_threshold <= MIN_THRESHOLD:  # degenerate (no containers): exact scalar path
            return np.asarray([calculate_priority(int(v), n) for v in sums.tolist()], np.int64)
        clamped = np.minimum(np.maximum(sums, MIN_THRESHOLD), max_threshold)  # np.clip: slower on small arrays
        return (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)


def new(args: Any, handle: Any) -> ImageLocality:
    if handle is None:
        return ImageLocality(None)
    return ImageLocality(handle.nodes, handle.features)
