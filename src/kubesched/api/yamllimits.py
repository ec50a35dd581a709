"""go-yaml's defence against "billion laughs" documents, shared by ``simulate``'s manifest reader
and the box's YAML request bodies.

go-yaml v2 (``decode.go`` ``decoder.unmarshal``, the fix of CVE-2019-11253, used by sigs.k8s.io/yaml
and so by kube-apiserver and kubectl) counts every node decoded through an alias; past 1,000
decodes with more than 100 alias decodes, a ratio above :func:`allowed_alias_ratio` fails the
document with ``yaml: document contains excessive aliasing``.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = ["EXCESSIVE_ALIASING", "allowed_alias_ratio", "excessive_aliasing"]

EXCESSIVE_ALIASING = "yaml: document contains excessive aliasing"


def allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% below 400,000 decodes, 10% above 4,000,000."""
    if decodes <= 400_000:
        return 0.99
    if decodes >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decodes - 400_000) / 3_600_000


def excessive_aliasing(node: Node) -> bool:
    """Whether the composed document ``node`` expands through aliases beyond go-yaml's limit.

    Walks the node graph (aliases are shared nodes there) and stops at the limit, so a 1 KB bomb
    is refused in milliseconds instead of being expanded."""
    seen: set[int] = set()
    decodes = aliases = 0
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, in_alias = stack.pop()
        decodes += 1
        if in_alias:
            aliases += 1
        elif id(n) in seen:
            in_alias = True  # a second occurrence: an alias of an anchored node
        if aliases > 100 and decodes > 1000 and aliases / decodes > allowed_alias_ratio(decodes):
            return True
        if isinstance(n, (MappingNode, SequenceNode)):
            if not in_alias:
                seen.add(id(n))
            if isinstance(n, MappingNode):
                for k, v in reversed(n.value):
                    stack.append((v, in_alias))
                    stack.append((k, in_alias))
            else:
                for v in reversed(n.value):
                    stack.append((v, in_alias))
    return False
