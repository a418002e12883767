"""One way to write JSON for a model, shared by the tools and the rule limits that measure it."""

from __future__ import annotations

import json

__all__ = ["compact_json"]


def compact_json(value: object) -> str:
    """JSON without spaces and with non-ASCII kept, as tools hand it to a model."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
