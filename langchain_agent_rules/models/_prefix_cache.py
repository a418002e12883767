"""Evaluated llama.cpp states of prompt prefixes, kept in RAM, least recently used evicted first.

A state is the KV cache of one sequence after a prefix (the system message: prompt, rules
and tools) was evaluated as its own batch. Restoring it gives exactly the numbers a fresh
evaluation of the same batch gives, so a conversation's replies do not depend on whether
its prefix came from here.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["PrefixCache"]


class PrefixCache:
    """A byte-bounded LRU map from prefix tokens to the saved state after them."""

    BYTES_PER_TOKEN = 4
    """What one key token costs, counted with the state's bytes against the bound."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, not {max_bytes}")
        self.max_bytes = max_bytes
        self.bytes_held = 0
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()

    def get(self, tokens: tuple[int, ...]) -> bytes | None:
        """The state saved after ``tokens``, or None; a hit becomes the most recently used."""
        state = self._states.get(tokens)
        if state is not None:
            self._states.move_to_end(tokens)
        return state

    def put(self, tokens: tuple[int, ...], state: bytes) -> None:
        """Keep ``state`` for ``tokens``, evicting the least recently used to stay in bounds."""
        self._drop(tokens)
        size = _size(tokens, state)
        if size > self.max_bytes:
            return
        while self.bytes_held + size > self.max_bytes:
            self._drop(next(iter(self._states)))
        self._states[tokens] = state
        self.bytes_held += size

    def _drop(self, tokens: tuple[int, ...]) -> None:
        state = self._states.pop(tokens, None)
        if state is not None:
            self.bytes_held -= _size(tokens, state)


def _size(tokens: tuple[int, ...], state: bytes) -> int:
    return len(state) + PrefixCache.BYTES_PER_TOKEN * len(tokens)
