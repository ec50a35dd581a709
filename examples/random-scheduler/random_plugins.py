"""The classic "random scheduler" tutorial, done the kubesched way: two Python plugins.

The tutorial's scheduler watches pods with its ``schedulerName``, keeps nodes at random
(predicate), scores them at random (priority), binds, and emits an event. In kubesched the
informers, the queue, binding and the FailedScheduling bookkeeping are the engine's; a profile
with its own ``schedulerName`` (``scheduler-config.yaml``) runs just these plugins:

* ``RandomFilter`` — Filter: each node passes with probability ``keepPercentage`` (typed args
  :class:`RandomArgs`, decoded and validated from ``pluginConfig``); PreFilter: a pod annotated
  ``random.example.com/candidates: a,b`` is restricted to those nodes (a ``PreFilterResult``);
  ``events_to_register``: a rejected pod is retried when a node is added or changes.
* ``RandomScore`` — Score: a random 0..100 per node; PostBind: a ``RandomlyScheduled`` event.

Randomness comes from the scheduler's seeded generator (``handle.rng``: ``--seed``), so
``simulate`` is deterministic; ``seed`` in the args gives a plugin its own generator.

Run it (from the repository root)::

    kubesched simulate -f examples/random-scheduler \\
        --plugin RandomFilter=examples/random-scheduler/random_plugins.py:new_filter \\
        --plugin RandomScore=examples/random-scheduler/random_plugins.py:new_score
    kubesched up -f examples/random-scheduler --until-idle --plugin ... (same two flags)

See ``docs/writing-plugins.md`` for the walk-through.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.errors import InputError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, PreFilterResult, Status
from kubesched.framework.plugin_args import PluginArgs, plugin_args

FILTER_NAME = "RandomFilter"
SCORE_NAME = "RandomScore"
ERR_REASON = "node(s) were not picked at random"
CANDIDATES_ANNOTATION = "random.example.com/candidates"


class RandomArgs(PluginArgs):
    """``pluginConfig[].args`` of both plugins (YAML keys in camelCase)."""

    keep_percentage: int = 50
    """Filter: the probability, in percent, that a node passes (0..100)."""
    seed: int | None = None
    """A plugin-own random generator; None = the scheduler's (``--seed``)."""
    event: bool = False
    """Score's PostBind: emit a ``RandomlyScheduled`` event on the bound pod."""

    def validate(self) -> None:
        if not 0 <= self.keep_percentage <= 100:
            raise InputError(f"must be in the range 0..100, got {self.keep_percentage}", "keepPercentage")


def _rng(args: RandomArgs, handle: Any) -> np.random.Generator:
    if args.seed is not None or handle.rng is None:
        return np.random.default_rng(args.seed)
    return handle.rng


class RandomFilter:
    """PreFilter + Filter (per-node shape: the framework loops over the nodes still feasible)."""

    name = FILTER_NAME

    def __init__(self, args: RandomArgs, handle: Any) -> None:
        self.keep = args.keep_percentage
        self.rng = _rng(args, handle)

    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        wanted = (pod.metadata.annotations or {}).get(CANDIDATES_ANNOTATION)
        if not wanted:
            return None, None  # all nodes
        return PreFilterResult(frozenset(n.strip() for n in wanted.split(",") if n.strip())), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        if int(self.rng.integers(100)) < self.keep:
            return None
        return Status.of(Code.UNSCHEDULABLE, ERR_REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # the dice are thrown again whenever a node comes or changes; the hint could inspect
        # (old, new) and return QueueingHint.SKIP for changes that cannot help
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE),
                                     lambda pod, old, new: QueueingHint.QUEUE)]


class RandomScore:
    """Score + PostBind."""

    name = SCORE_NAME

    def __init__(self, args: RandomArgs, handle: Any) -> None:
        self.rng = _rng(args, handle)
        self.event = args.event
        self.handle = handle

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        return int(self.rng.integers(0, 101)), None

    def post_bind(self, state: Any, pod: Any, node_name: str) -> None:
        client = self.handle.client
        if self.event and client is not None:
            client.record_event(pod, "Normal", "RandomlyScheduled", "Binding",
                                f"{pod.metadata.namespace}/{pod.metadata.name} was placed on {node_name} at random")


@plugin_args(RandomArgs)
def new_filter(args: RandomArgs, handle: Any) -> RandomFilter:
    return RandomFilter(args, handle)


@plugin_args(RandomArgs)
def new_score(args: RandomArgs, handle: Any) -> RandomScore:
    return RandomScore(args, handle)
