"""The bounded LRU of evaluated prompt prefixes (pure bookkeeping, no model)."""

from __future__ import annotations

import pytest

from langchain_agent_rules.models._prefix_cache import PrefixCache


def test_a_stored_state_is_returned_for_the_same_tokens() -> None:
    cache = PrefixCache(max_bytes=1000)
    cache.put((1, 2, 3), b"state-a")
    assert cache.get((1, 2, 3)) == b"state-a"
    assert cache.get((1, 2)) is None


def test_the_least_recently_used_state_is_evicted_first() -> None:
    cache = PrefixCache(max_bytes=2 * 100 + 2 * 3 * PrefixCache.BYTES_PER_TOKEN)
    cache.put((1, 2, 3), b"a" * 100)
    cache.put((4, 5, 6), b"b" * 100)
    assert cache.get((1, 2, 3)) == b"a" * 100  # now (4, 5, 6) is the oldest
    cache.put((7, 8, 9), b"c" * 100)
    assert cache.get((4, 5, 6)) is None
    assert cache.get((1, 2, 3)) == b"a" * 100
    assert cache.get((7, 8, 9)) == b"c" * 100


def test_the_bytes_held_never_exceed_the_bound() -> None:
    cache = PrefixCache(max_bytes=1000)
    for number in range(50):
        cache.put((number,), bytes(90 + number))
        assert cache.bytes_held <= 1000
    assert cache.get((49,)) == bytes(139)


def test_a_state_larger_than_the_bound_is_not_kept() -> None:
    cache = PrefixCache(max_bytes=100)
    cache.put((1,), b"small")
    cache.put((2,), bytes(200))
    assert cache.get((2,)) is None
    assert cache.get((1,)) == b"small"


def test_storing_the_same_prefix_again_replaces_it() -> None:
    cache = PrefixCache(max_bytes=1000)
    cache.put((1,), b"old")
    cache.put((1,), b"newer")
    assert cache.get((1,)) == b"newer"
    assert cache.bytes_held == len(b"newer") + PrefixCache.BYTES_PER_TOKEN


def test_a_zero_bound_keeps_nothing() -> None:
    cache = PrefixCache(max_bytes=0)
    cache.put((1,), b"x")
    assert cache.get((1,)) is None


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        PrefixCache(max_bytes=-1)
