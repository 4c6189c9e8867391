"""The ``requires`` graph: cycle cutting and ancestor closure (document order kept)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ancestors_of", "cut_cycles"]

Graph = Mapping[str, tuple[str, ...]]


def cut_cycles(graph: Graph) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """Find the steps on or behind a cycle and cut the edges among them.

    Args:
        graph: Step id to prerequisite ids (document order).

    Returns:
        The prerequisites with every edge between cyclic steps removed, and the cyclic
        steps in document order (empty when the graph is a DAG).
    """
    remaining = {node: {r for r in reqs if r in graph} for node, reqs in graph.items()}
    progress = True
    while progress:
        ready = [n for n, reqs in remaining.items() if not reqs]
        progress = bool(ready)
        for node in ready:
            del remaining[node]
        for reqs in remaining.values():
            reqs.difference_update(ready)
    stuck = [n for n in graph if n in remaining]
    cut = {n: tuple(r for r in reqs if r not in remaining) for n, reqs in graph.items()}
    return cut, stuck


def ancestors_of(graph: Graph) -> dict[str, tuple[str, ...]]:
    """Every transitive prerequisite of each step, in the graph's (document) order.

    The graph must be acyclic (run :func:`cut_cycles` first); unknown ids are ignored.
    """
    order = {node: i for i, node in enumerate(graph)}
    memo: dict[str, frozenset[str]] = {}

    def visit(node: str) -> frozenset[str]:
        if node not in memo:
            memo[node] = frozenset()  # guards against a cycle the caller left in
            found: set[str] = set()
            for req in graph.get(node, ()):
                if req in order:
                    found.add(req)
                    found |= visit(req)
            memo[node] = frozenset(found)
        return memo[node]

    return {node: tuple(sorted(visit(node), key=order.__getitem__)) for node in graph}
