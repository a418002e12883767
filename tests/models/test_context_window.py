"""A prompt longer than the context window is our own error, naming both figures and the ways out.

The check runs on the token count before llama.cpp evaluates anything, so it is tested here
without a model; tests/real_model drives it through the embedded model.
"""

from __future__ import annotations

import pytest

from langchain_agent_rules.errors import AgentRulesError, ContextWindowError
from langchain_agent_rules.models._llama_runner import room_for_reply


def test_the_room_left_for_the_reply_is_the_context_minus_the_prompt() -> None:
    assert room_for_reply(4000, 4096) == 96
    assert room_for_reply(4095, 4096) == 1


@pytest.mark.parametrize("prompt_tokens", [4096, 5012])
def test_a_prompt_that_leaves_no_room_is_refused_word_for_word(prompt_tokens: int) -> None:
    with pytest.raises(ContextWindowError) as caught:
        room_for_reply(prompt_tokens, 4096)

    assert str(caught.value) == (
        f"the prompt has {prompt_tokens:,} tokens, more than the model's context window of "
        "4,096 (n_ctx); give the model a larger n_ctx, or shorten the conversation: a new "
        "thread, fewer or smaller tool results (max_observation_bytes)"
    )


def test_it_ends_a_run_as_a_runtime_error_the_langgraph_server_shows() -> None:
    assert issubclass(ContextWindowError, AgentRulesError)
    assert issubclass(ContextWindowError, RuntimeError)
