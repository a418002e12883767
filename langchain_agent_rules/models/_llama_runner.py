"""One loaded llama.cpp model: serialised calls, exact prefix reuse, constrained sampling.

A prompt is evaluated in segments, one per chat message (the chat template rendered up to
the end of that message) plus the generation prompt, each segment as its own batch. The
KV cache after a segment therefore depends only on the tokens up to it, never on what
ran before, so it can be reused exactly:

- the state after the first segment, when it is a system message (prompt, rules and
  tools), is saved in a bounded LRU (`PrefixCache`) and restored for every conversation
  that starts with it;
- a call that continues the previous call's messages (the steps of one agent run) keeps
  the segments it shares with it in place and evaluates only the new ones.

A fresh evaluation splits the prompt the same way, so fresh, restored and continued calls
compute the same numbers and, at temperature 0, the same replies.

Sampling checks the grammar lazily, as llama.cpp's own sampler does: the token the model
prefers is checked alone, and only when the grammar rejects it is the grammar applied to
the whole vocabulary (about 30 ms a token on a small machine). At temperature 0 this picks
exactly the token the fully constrained sampler picks. Text the grammar forces (the tool
block's envelope once a reply has started it) is appended without sampling and evaluated
with the next token in one batch: on a small machine a decode step costs about as much
for ten tokens as for one.
"""

from __future__ import annotations

import codecs
import ctypes
import itertools
import json
import threading
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from langchain_agent_rules.errors import ContextWindowError
from langchain_agent_rules.models._file_identity import file_identity, llama_cpp_build
from langchain_agent_rules.models._prefix_cache import PrefixCache
from langchain_agent_rules.models._prefix_store import PrefixKey, PrefixStore
from langchain_agent_rules.models._tool_grammar import ReplyGrammar

__all__ = ["CONTEXT_WINDOW_TEMPLATE", "CallUsage", "LlamaRunner", "Sampling", "room_for_reply"]

_TOP_K, _TOP_P, _MIN_P, _PENALTY_LAST_N = 40, 0.95, 0.05, 64


@dataclass(frozen=True)
class Sampling:
    """How to pick tokens: greedy at temperature 0; ``max_tokens`` bounds the reply."""

    temperature: float
    repeat_penalty: float
    seed: int
    max_tokens: int


@dataclass
class CallUsage:
    """What one call cost: prompt tokens and tokens generated.

    ``cached_tokens`` of the prompt came from reuse; ``forced_tokens`` of the generated
    ones the grammar forced (they cost no decode step of their own).
    """

    prompt_tokens: int = 0
    cached_tokens: int = 0
    generated_tokens: int = 0
    forced_tokens: int = 0
    finish_reason: str = "stop"


CONTEXT_WINDOW_TEMPLATE = (
    "the prompt has {prompt_tokens:,} tokens, more than the model's context window of "
    "{n_ctx:,} (n_ctx); give the model a larger n_ctx, or shorten the conversation: a new "
    "thread, fewer or smaller tool results (max_observation_bytes)"
)


def room_for_reply(prompt_tokens: int, n_ctx: int) -> int:
    """The tokens left for the reply; `ContextWindowError` when the prompt leaves none."""
    room = n_ctx - prompt_tokens
    if room <= 0:
        raise ContextWindowError(
            CONTEXT_WINDOW_TEMPLATE.format(prompt_tokens=prompt_tokens, n_ctx=n_ctx)
        )
    return room


class LlamaRunner:
    """A loaded `llama_cpp.Llama` with the lock that serialises it and its reusable state."""

    def __init__(self, llama: Any, prefix_cache_bytes: int) -> None:
        from llama_cpp.llama_chat_format import CHATML_CHAT_TEMPLATE, Jinja2ChatFormatter

        self.llama = llama
        self.lock = threading.Lock()
        self.prefixes = PrefixCache(prefix_cache_bytes)
        self._kept: list[tuple[int, ...]] = []
        template = llama.metadata.get("tokenizer.chat_template") or CHATML_CHAT_TEMPLATE
        eos, bos = _token_text(llama, llama.token_eos()), _token_text(llama, llama.token_bos())
        self._render = Jinja2ChatFormatter(template, eos, bos, add_generation_prompt=False)
        self._render_open = Jinja2ChatFormatter(template, eos, bos, add_generation_prompt=True)
        self._place, self._version = _prefix_identity(llama)

    def forget(self) -> None:
        """Drop every saved prefix and the kept context: the next call evaluates afresh."""
        with self.lock:
            self.prefixes = PrefixCache(self.prefixes.max_bytes)
            self._kept = []

    def segments(self, messages: Sequence[dict[str, str]]) -> list[tuple[int, ...]]:
        """The prompt's tokens, split after each message and before the generation prompt.

        A split is made only where the template renders the shorter conversation as a
        prefix of the whole (some templates join consecutive tool messages).
        """
        if not messages:
            raise ValueError("a chat model call needs at least one message")
        chat: list[Any] = list(messages)
        full = self._render_open(messages=chat).prompt
        cuts = [0]
        for end in range(1, len(messages) + 1):
            head = self._render(messages=chat[:end]).prompt
            if len(head) > cuts[-1] and full.startswith(head):
                cuts.append(len(head))
        if cuts[-1] < len(full):
            cuts.append(len(full))
        return [
            tuple(self.llama.tokenize(full[start:end].encode(), add_bos=False, special=True))
            for start, end in itertools.pairwise(cuts)
        ]

    def generate(
        self,
        messages: Sequence[dict[str, str]],
        sampling: Sampling,
        grammar: ReplyGrammar | None,
        usage: CallUsage,
        store: PrefixStore | None = None,
    ) -> Generator[str, None, None]:
        """Yield the reply's text as it is generated; ``usage`` is filled as it goes.

        The state after a system message is also looked up in, and saved to, ``store``
        (on disk, for later processes). The model is locked from the first piece until
        the generator ends or is closed.
        """
        with self.lock:
            segments = self.segments(messages)
            usage.prompt_tokens = sum(len(segment) for segment in segments)
            room = room_for_reply(usage.prompt_tokens, self.llama.n_ctx())
            cacheable = messages[0].get("role") == "system"
            usage.cached_tokens = self._evaluate(segments[:-1], cacheable, store)
            limit = min(sampling.max_tokens, room)
            yield from self._sample(list(segments[-1]), sampling, grammar, limit, usage)

    def _evaluate(
        self, head: list[tuple[int, ...]], cacheable: bool, store: PrefixStore | None
    ) -> int:
        """Bring the context to the state after ``head``; return the tokens not evaluated."""
        reused = 0
        while reused < min(len(head), len(self._kept)) and head[reused] == self._kept[reused]:
            reused += 1
        self._kept = []
        if reused:
            self.llama.n_tokens = sum(len(segment) for segment in head[:reused])
        elif head and cacheable and self._restore_prefix(head[0], store):
            reused = 1
        else:
            self.llama.reset()
        for index in range(reused, len(head)):
            self.llama.eval(head[index])
            if index == 0 and cacheable:
                self._save_prefix(head[0], store)
        self._kept = head
        return sum(len(segment) for segment in head[:reused])

    def _prefix_key(self, tokens: tuple[int, ...]) -> PrefixKey:
        return PrefixKey(self._place, self._version, tokens)

    def _restore_prefix(self, tokens: tuple[int, ...], store: PrefixStore | None) -> bool:
        """Restore the state after ``tokens`` from RAM, else from ``store``, if saved."""
        state = self.prefixes.get(tokens)
        if state is None and store is not None:
            state = store.get(self._prefix_key(tokens))
            if state is not None:
                self.prefixes.put(tokens, state)
        return state is not None and self._load_state(state, tokens)

    def _save_prefix(self, tokens: tuple[int, ...], store: PrefixStore | None) -> None:
        state = self._save_state()
        self.prefixes.put(tokens, state)
        if store is not None:
            store.put(self._prefix_key(tokens), state)

    def _save_state(self) -> bytes:
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(self.llama.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(self.llama.ctx, buffer, size, 0)
        return bytes(buffer)[:written]

    def _load_state(self, state: bytes, tokens: tuple[int, ...]) -> bool:
        """Restore ``state``; False when llama.cpp refuses it (the caller evaluates afresh)."""
        import llama_cpp

        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.llama.ctx), True)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_seq_set_data(self.llama.ctx, buffer, len(state), 0) == 0:
            return False
        self.llama.n_tokens = len(tokens)
        self.llama.input_ids[: len(tokens)] = tokens
        return True

    def _sample(
        self,
        batch: list[int],
        sampling: Sampling,
        grammar: ReplyGrammar | None,
        limit: int,
        usage: CallUsage,
    ) -> Iterator[str]:
        """Decode after ``batch`` (the generation prompt, not yet evaluated)."""
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(self.llama.model)
        chain = _sampler_chain(self.llama.n_vocab(), sampling)
        constraint = None
        if grammar is not None:
            constraint = llama_cpp.llama_sampler_init_grammar(vocab, grammar.gbnf.encode(), b"root")
            if not constraint:
                llama_cpp.llama_sampler_free(chain)
                raise ValueError("llama.cpp rejected the tool-call grammar")
        candidates = _Candidates(self.llama.n_vocab())
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = ""
        usage.finish_reason = "length"
        try:
            while True:
                forced = self._forced(grammar, text, chain, constraint, candidates, usage, limit)
                for token in forced:
                    piece = decoder.decode(self.llama.detokenize([token]))
                    text += piece
                    if piece:
                        yield piece
                batch += forced
                if usage.generated_tokens >= limit:
                    break
                self.llama.eval(batch)
                logits = np.ctypeslib.as_array(
                    llama_cpp.llama_get_logits_ith(self.llama.ctx, -1),
                    shape=(self.llama.n_vocab(),),
                )
                token = candidates.pick(logits, chain, constraint)
                _accept(token, chain, constraint)
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    usage.finish_reason = "stop"
                    break
                usage.generated_tokens += 1
                piece = decoder.decode(self.llama.detokenize([token]))
                text += piece
                if piece:
                    yield piece
                batch = [token]
            tail = decoder.decode(b"", final=True)
            if tail:
                yield tail
        finally:
            llama_cpp.llama_sampler_free(chain)
            if constraint is not None:
                llama_cpp.llama_sampler_free(constraint)

    def _forced(
        self,
        grammar: ReplyGrammar | None,
        text: str,
        chain: Any,
        constraint: Any,
        candidates: _Candidates,
        usage: CallUsage,
        limit: int,
    ) -> list[int]:
        """The tokens of the text the grammar forces after ``text``, accepted and counted.

        Each is checked against the grammar like a sampled token, so forcing can only
        stop early, never write what the grammar rejects.
        """
        forced_text = grammar.forced_after(text) if grammar is not None else ""
        if not forced_text:
            return []
        tokens = self.llama.tokenize(forced_text.encode(), add_bos=False, special=False)
        accepted: list[int] = []
        for token in tokens[: limit - usage.generated_tokens]:
            if not candidates.allows(constraint, token):
                break
            _accept(token, chain, constraint)
            accepted.append(token)
        usage.generated_tokens += len(accepted)
        usage.forced_tokens += len(accepted)
        return accepted


def _prefix_identity(llama: Any) -> tuple[str, str]:
    """A loaded model's `PrefixKey` place (file and settings) and version (file and build)."""
    import llama_cpp

    model_file = Path(llama.model_path)
    place = {
        "model": str(model_file.resolve()),
        "n_ctx": llama.n_ctx(),
        "n_batch": llama.n_batch,
        "n_ubatch": llama.context_params.n_ubatch,
        "n_threads": llama.context_params.n_threads,
        "n_threads_batch": llama.context_params.n_threads_batch,
    }
    version = {
        "model_file": file_identity(model_file),
        "llama_cpp": f"{llama_cpp.__version__} {llama_cpp_build()}",
    }
    return json.dumps(place, sort_keys=True), json.dumps(version, sort_keys=True)


def _accept(token: int, chain: Any, constraint: Any) -> None:
    import llama_cpp

    llama_cpp.llama_sampler_accept(chain, token)
    if constraint is not None:
        llama_cpp.llama_sampler_accept(constraint, token)


def _token_text(llama: Any, token: int) -> str:
    return llama.detokenize([token], special=True).decode(errors="replace") if token >= 0 else ""


def _sampler_chain(n_vocab: int, sampling: Sampling) -> Any:
    import llama_cpp

    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    add = llama_cpp.llama_sampler_chain_add
    if sampling.repeat_penalty != 1.0:
        add(
            chain,
            llama_cpp.llama_sampler_init_penalties(
                n_vocab, _PENALTY_LAST_N, sampling.repeat_penalty, 0.0, 0.0
            ),
        )
    if sampling.temperature == 0.0:
        add(chain, llama_cpp.llama_sampler_init_greedy())
        return chain
    add(chain, llama_cpp.llama_sampler_init_top_k(_TOP_K))
    add(chain, llama_cpp.llama_sampler_init_top_p(_TOP_P, 1))
    add(chain, llama_cpp.llama_sampler_init_min_p(_MIN_P, 1))
    add(chain, llama_cpp.llama_sampler_init_temp(sampling.temperature))
    add(chain, llama_cpp.llama_sampler_init_dist(sampling.seed))
    return chain


class _Candidates:
    """The token candidates of one step, and the one-token array for the lazy grammar check."""

    def __init__(self, n_vocab: int) -> None:
        import llama_cpp

        dtype = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        self._ids = np.arange(n_vocab, dtype=np.intc)
        self._all = np.zeros(n_vocab, dtype=dtype)
        self._one = np.zeros(1, dtype=dtype)
        self._all_view = llama_cpp.llama_token_data_array(
            data=self._all.ctypes.data_as(llama_cpp.llama_token_data_p), size=n_vocab
        )
        self._one_view = llama_cpp.llama_token_data_array(
            data=self._one.ctypes.data_as(llama_cpp.llama_token_data_p), size=1
        )

    def pick(self, logits: np.ndarray[Any, Any], chain: Any, constraint: Any) -> int:
        token = self._apply(logits, chain)
        if constraint is None or self.allows(constraint, token, float(logits[token])):
            return token
        return self._apply(logits, constraint, chain)

    def allows(self, constraint: Any, token: int, logit: float = 0.0) -> bool:
        """Whether the grammar ``constraint`` accepts ``token`` next."""
        import llama_cpp

        self._one[0] = (token, logit, 0.0)
        self._one_view.size, self._one_view.selected, self._one_view.sorted = 1, -1, False
        llama_cpp.llama_sampler_apply(constraint, ctypes.byref(self._one_view))
        return bool(np.isfinite(self._one["logit"][0]))

    def _apply(self, logits: np.ndarray[Any, Any], *samplers: Any) -> int:
        import llama_cpp

        self._all["id"] = self._ids
        self._all["logit"] = logits
        self._all["p"] = 0.0
        view = self._all_view
        view.size, view.selected, view.sorted = len(self._ids), -1, False
        for sampler in samplers:
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(view))
        # Samplers may sort and shrink the array in place; read it through the C view.
        return int(view.data[view.selected].id)
