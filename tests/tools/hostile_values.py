"""Hypothesis strategies for what a model can put in tool arguments, hostile cases weighted in."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

ANY_CHARACTER = st.characters(exclude_categories=())  # lone surrogates included
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
SPECIAL_STRINGS = [
    "",
    " ",
    "\x00",
    "\r\n",
    "\u2028",
    "\ufeff",
    "\ud800",
    "\udcff",
    "é",
    "😀",
    "../" * 50,
    "x" * 70_000,
    "(" * 5_000,
    "[" * 5_000,
]
BIG_INTEGERS = st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**400])


def hostile_text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Any text, a lone surrogate inside some of it, and a few known troublemakers."""
    return st.one_of(
        st.text(ANY_CHARACTER, max_size=max_size),
        st.tuples(st.text(max_size=max_size), SURROGATE, st.text(max_size=max_size)).map("".join),
        st.sampled_from(SPECIAL_STRINGS),
    )


def nested(depth: int, leaf: Any = "leaf") -> Any:
    """``depth`` lists and objects around ``leaf``, alternately."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


# LangChain's BaseTool.run takes str() of the arguments before any tool sees them, which
# Python cannot do past ~1,000 levels; deeper values never reach a tool.
DEEP_VALUES = st.integers(min_value=1, max_value=400).map(nested)

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), BIG_INTEGERS, st.floats(), hostile_text()
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(hostile_text(10), children, max_size=4)
    ),
    max_leaves=12,
)
ANY_VALUE = st.one_of(JSON_VALUES, DEEP_VALUES)


def arguments(known: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Argument objects: the known keys with plausible or hostile values, plus stray keys."""
    plausible_or_hostile = {key: st.one_of(value, ANY_VALUE) for key, value in known.items()}
    with_known = st.tuples(
        st.fixed_dictionaries({}, optional=plausible_or_hostile),
        st.dictionaries(hostile_text(10), ANY_VALUE, max_size=2),
    ).map(lambda parts: {**parts[1], **parts[0]})
    return st.one_of(with_known, st.dictionaries(hostile_text(10), ANY_VALUE, max_size=4))
