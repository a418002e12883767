"""Turn database values into JSON-safe values a model can read."""

from __future__ import annotations

import datetime as dt
import math

__all__ = ["BINARY_VALUE", "JsonValue", "json_safe"]

JsonValue = None | bool | int | float | str
BINARY_VALUE = "<binary, {size} bytes>"


def json_safe(value: object) -> JsonValue:
    """Return ``value`` as a JSON-safe scalar.

    Dates and times become ISO 8601 strings, decimals and UUIDs their exact text,
    non-finite floats their name (``"nan"``, ``"inf"``) and bytes a short summary.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return BINARY_VALUE.format(size=len(value))
    # Decimals, UUIDs, intervals and driver-specific types: their exact text.
    return str(value)
