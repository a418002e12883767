r"""What a tool check reads of a call's arguments: what the tool receives, and its JSON.

`argument_texts` returns the texts an ``args`` pattern is searched in: the arguments as
compact JSON with sorted keys (``{"sql":"SELECT 1"}``), then every string in them as the
tool receives it, keys and values, nested ones included. In the JSON a line break is the
two characters ``\n``; in the strings it is a line break, so ``(?i)\bemail\b`` finds
``SELECT\nemail FROM customers`` and ``(?i)delete\s+from`` finds ``DELETE\nFROM``.
Arguments that cannot be written as JSON (a cycle, an object JSON does not know, nesting
deeper than Python's recursion limit) give None: the check counts them as matching.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["argument_texts"]


def argument_texts(arguments: object) -> list[str] | None:
    """The compact JSON of ``arguments`` and each distinct string in them, or None."""
    try:
        compact = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
    strings: dict[str, None] = {}
    pending = [arguments]  # JSON wrote them, so they hold no cycle
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            strings[value] = None
        elif isinstance(value, Mapping):
            strings.update(dict.fromkeys(key for key in value if isinstance(key, str)))
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
    strings.pop(compact, None)
    return [compact, *strings]
