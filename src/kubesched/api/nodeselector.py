"""Node selectors and node affinity, per upstream
``staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``.

Semantics: terms are ORed; inside a term, matchExpressions (label requirements) AND
matchFields (field requirements) are ANDed; a term with neither matches nothing; a term
whose requirements fail to parse never matches (its errors are kept, "lazy errors").
matchFields support In/NotIn with exactly one value, compared against the node's fields
``{"metadata.name": name}`` (an unknown field key reads as ``""``; when the node name is
empty the field requirements are not checked, as upstream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kubesched.api import labels as _labels
from kubesched.api.labels import Requirement, Selector, make_requirement, requirement_matches, selector_from_set
from kubesched.errors import SelectorError

if TYPE_CHECKING:
    from kubesched.api.objects import (
        NodeSelector,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        Pod,
        PreferredSchedulingTerm,
    )

__all__ = [
    "FieldRequirement",
    "NodeSelectorMatcher",
    "ParsedTerm",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "is_empty_term",
]

_NODE_OPS = {
    "In": _labels.IN,
    "NotIn": _labels.NOT_IN,
    "Exists": _labels.EXISTS,
    "DoesNotExist": _labels.DOES_NOT_EXIST,
    "Gt": _labels.GREATER_THAN,
    "Lt": _labels.LESS_THAN,
}
_VALID_NODE_OPS = '"DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"'
_VALID_FIELD_OPS = '"In", "NotIn"'

#: (field key, equal, value): ``equal`` True for In (``==``), False for NotIn (``!=``).
FieldRequirement = tuple[str, bool, str]


def is_empty_term(term: NodeSelectorTerm) -> bool:
    """True when the term has no matchExpressions and no matchFields (it selects nothing)."""
    return not term.match_expressions and not term.match_fields


class ParsedTerm:
    """One parsed ``NodeSelectorTerm``.

    ``label_requirements`` is None when the term has no matchExpressions (not checked),
    ``field_requirements`` is None when it has no matchFields; ``errors`` lists parse
    errors (``path: message``); a term with errors never matches.
    """

    __slots__ = ("label_requirements", "field_requirements", "errors")

    def __init__(self, term: NodeSelectorTerm, path: str) -> None:
        self.label_requirements: tuple[Requirement, ...] | None = None
        self.field_requirements: tuple[FieldRequirement, ...] | None = None
        self.errors: list[str] = []
        if term.match_expressions:
            self.label_requirements = self._parse_labels(term.match_expressions, f"{path}.matchExpressions")
        if term.match_fields:
            self.field_requirements = self._parse_fields(term.match_fields, f"{path}.matchFields")

    def _parse_labels(self, exprs: Sequence[NodeSelectorRequirement], path: str) -> tuple[Requirement, ...]:
        reqs = []
        for i, expr in enumerate(exprs):
            op = _NODE_OPS.get(expr.operator)
            if op is None:
                self.errors.append(
                    f"{path}[{i}].operator: Unsupported value: {expr.operator!r}: supported values: {_VALID_NODE_OPS}"
                )
                continue
            try:
                reqs.append(make_requirement(expr.key, op, expr.values))
            except SelectorError as exc:
                self.errors.append(f"{path}[{i}]: {exc}")
        return tuple(sorted(reqs, key=lambda r: r[0]))

    def _parse_fields(self, exprs: Sequence[NodeSelectorRequirement], path: str) -> tuple[FieldRequirement, ...]:
        reqs = []
        for i, expr in enumerate(exprs):
            if expr.operator in ("In", "NotIn"):
                if len(expr.values) != 1:
                    self.errors.append(
                        f"{path}[{i}].values: Invalid value: {list(expr.values)!r}: must have one element")
                else:
                    reqs.append((expr.key, expr.operator == "In", expr.values[0]))
            else:
                self.errors.append(
                    f"{path}[{i}].operator: Unsupported value: {expr.operator!r}: supported values: {_VALID_FIELD_OPS}"
                )
        return tuple(reqs)

    def match(self, labels: Mapping[str, str], name: str) -> bool:
        if self.errors:
            return False
        if self.label_requirements is not None:
            for req in self.label_requirements:
                if not requirement_matches(req, labels):
                    return False
        if self.field_requirements is not None and name:
            for key, equal, val in self.field_requirements:
                have = name if key == "metadata.name" else ""
                if (have == val) != equal:
                    return False
        return True


class NodeSelectorMatcher:
    """A ``v1.NodeSelector`` parsed lazily (upstream ``NewLazyErrorNodeSelector``).

    ``terms`` are the parsed non-empty terms; ``errors`` every parse error, each prefixed
    with its field path (``nodeSelectorTerms[0].matchExpressions[1].operator: ...``).
    """

    __slots__ = ("terms", "errors")

    def __init__(self, selector: NodeSelector | None, path: str = "") -> None:
        self.terms: list[ParsedTerm] = []
        self.errors: list[str] = []
        base = f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms"
        for i, term in enumerate(selector.node_selector_terms if selector is not None else ()):
            if is_empty_term(term):
                continue
            parsed = ParsedTerm(term, f"{base}[{i}]")
            self.terms.append(parsed)
            self.errors.extend(parsed.errors)

    def match(self, labels: Mapping[str, str], name: str) -> bool:
        """True when any term matches the node's labels and name."""
        for term in self.terms:
            if term.match(labels, name):
                return True
        return False

    def match_with_errors(self, labels: Mapping[str, str], name: str) -> tuple[bool, list[str]]:
        """Upstream ``LazyErrorNodeSelector.Match``: parse errors are reported only when no term matched."""
        if self.match(labels, name):
            return True, []
        return False, list(self.errors)


class RequiredNodeAffinity:
    """A pod's hard node constraints (upstream ``nodeaffinity.GetRequiredNodeAffinity``):
    ``spec.nodeSelector`` (every label must be equal) AND the required node-affinity terms.
    """

    __slots__ = ("label_selector", "node_selector")

    def __init__(self, pod: Pod) -> None:
        spec = pod.spec
        self.label_selector: Selector | None = selector_from_set(spec.node_selector) if spec.node_selector else None
        self.node_selector: NodeSelectorMatcher | None = None
        aff = spec.affinity
        if aff is not None and aff.node_affinity is not None:
            required = aff.node_affinity.required_during_scheduling_ignored_during_execution
            if required is not None:
                self.node_selector = NodeSelectorMatcher(required)

    def match(self, labels: Mapping[str, str], name: str) -> bool:
        if self.label_selector is not None and not self.label_selector.matches(labels):
            return False
        if self.node_selector is not None:
            return self.node_selector.match(labels, name)
        return True


class PreferredSchedulingTerms:
    """Weighted preferred node-affinity terms (upstream ``nodeaffinity.NewPreferredSchedulingTerms``).

    Terms with weight 0 or with no expressions/fields are skipped. Raises
    :class:`SelectorError` (all parse errors joined with ``"; "``) when any term fails to parse.
    """

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[PreferredSchedulingTerm], path: str = "") -> None:
        self.terms: list[tuple[ParsedTerm, int]] = []
        errors: list[str] = []
        for i, term in enumerate(terms):
            if term.weight == 0 or is_empty_term(term.preference):
                continue
            parsed = ParsedTerm(term.preference, f"{path}[{i}]")
            if parsed.errors:
                errors.extend(parsed.errors)
            else:
                self.terms.append((parsed, term.weight))
        if errors:
            raise SelectorError("; ".join(errors))

    def score(self, labels: Mapping[str, str], name: str) -> int:
        """Sum of the weights of the terms matching the node."""
        total = 0
        for parsed, weight in self.terms:
            if parsed.match(labels, name):
                total += weight
        return total
