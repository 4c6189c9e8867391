"""Find keys written twice in one YAML mapping.

YAML readers keep the last of two equal keys without a word, so a second ``setter:`` in a slot
or a second ``flow:`` section silently replaces the first. The loader reports each one.
"""

from __future__ import annotations

import yaml

__all__ = ["duplicate_keys"]


def duplicate_keys(text: str) -> list[tuple[int, str]]:
    """(line, key) for every key repeated in its mapping; empty when the text does not parse."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    found: list[tuple[int, str]] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value)
                if isinstance(key, yaml.ScalarNode) and name in seen and name != "<<":
                    found.append((key.start_mark.line + 1, name))
                seen.add(name)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(found)
