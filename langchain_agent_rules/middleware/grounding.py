"""`GroundedAnswersMiddleware`: an answer states only what the tools, the task or the rules say.

After tools ran in a run, an answer that states a number or a proper name found nowhere
the model was shown (the tools' results, the conversation, the system prompt with its
rules) is revised once, with what the tools returned; a revision that is still not
grounded becomes `UNGROUNDED_ANSWER`. A small model otherwise answers "a salary of
50,000" after a query returned no rows. `ungrounded_claims` is the check, a pure function:

- a number is grounded when the same value appears in a source (``1,250.50`` and
  ``1250.5`` are one value; ``15%`` is 15 and 0.15), or one sum, difference, product or
  quotient of two source values gives it (to the decimals the answer shows: the model did
  the arithmetic); one-digit numbers always are;
- a proper name (two or more capitalised words, a leading article dropped) is grounded
  when each of its words appears in a source, in any case.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from langchain_agent_rules.middleware._replies import answer_text
from langchain_agent_rules.middleware._step import (
    Call,
    ModelStep,
    StepMiddleware,
    TurnSteps,
)
from langchain_agent_rules.middleware.limits import task_of
from langchain_agent_rules.middleware.prompts import GROUNDING_REQUEST, UNGROUNDED_ANSWER
from langchain_agent_rules.middleware.state import GuardState, TraceStep
from langchain_agent_rules.text_protocol import OBSERVATION_PART

__all__ = ["GroundedAnswersMiddleware", "ungrounded_claims"]

_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])-?\d+(?:\.\d+)?")
_CAPITALISED = r"[A-Z][a-z]+(?:['-][A-Za-z]+)?"
_NAME = re.compile(rf"\b{_CAPITALISED}(?:\s+{_CAPITALISED})+\b")
_WORD = re.compile(r"\w+")
_LEADING = frozenset(
    {
        "The",
        "A",
        "An",
        "This",
        "That",
        "These",
        "Those",
        "There",
        "It",
        "Its",
        "In",
        "On",
        "At",
        "For",
        "From",
        "By",
        "With",
        "And",
        "But",
        "Or",
        "Our",
        "Your",
        "My",
        "We",
        "You",
        "They",
        "He",
        "She",
        "I",
        "If",
        "When",
        "Yes",
        "No",
    }
)
_MAX_TEXT_CHARS = 200_000
_MAX_OPERANDS = 200
"""Source values tried as operands when a number is checked for being derived from two."""


def _value(number: str) -> Decimal | None:
    try:
        return Decimal(number.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _values(text: str) -> set[Decimal]:
    values: set[Decimal] = set()
    for match in _NUMBER.finditer(text):
        value = _value(match.group())
        if value is None:
            continue
        values.add(value)
        if text[match.end() : match.end() + 1] == "%":
            values.add((value / 100).normalize())
    return values


def _derived(claim: Decimal, known: set[Decimal]) -> bool:
    """Whether one arithmetic operation on two known values gives ``claim``, as rounded."""
    places = max(-int(claim.as_tuple().exponent), 0)
    tolerance = 0.5 * 10.0**-places + 1e-9
    target = float(claim)
    values = sorted(float(v) for v in sorted(known, key=abs, reverse=True)[:_MAX_OPERANDS])

    def near(wanted: float, width: float) -> bool:
        index = bisect.bisect_left(values, wanted - width)
        return index < len(values) and values[index] <= wanted + width

    for a in values:
        if near(target - a, tolerance) or near(a - target, tolerance):  # a + b, a - b
            return True
        if a and near(target / a, tolerance / abs(a)):  # a * b
            return True
        if a and target and near(a / target, tolerance * abs(a) / target**2):  # a / b
            return True
    return False


def _names(text: str) -> list[str]:
    names = []
    for match in _NAME.finditer(text):
        words = match.group().split()
        while words and words[0] in _LEADING:
            words = words[1:]
        if len(words) >= 2:
            names.append(" ".join(words))
    return names


def ungrounded_claims(answer: str, sources: Iterable[str]) -> list[str]:
    """The numbers and proper names in ``answer`` that no text of ``sources`` holds."""
    source = "\n".join(sources)[:_MAX_TEXT_CHARS]
    answer = answer[:_MAX_TEXT_CHARS]
    known_values = _values(source)
    known_words = {word.lower() for word in _WORD.findall(source)}
    claims: list[str] = []
    for match in _NUMBER.finditer(answer):
        value = _value(match.group())
        if value is None or abs(value) < 10 or value in known_values:
            continue
        forms = [value]
        if answer[match.end() : match.end() + 1] == "%":
            forms.append((value / 100).normalize())
        if not any(_derived(form, known_values) for form in forms):
            claims.append(match.group())
    for name in _names(answer):
        if not all(word.lower() in known_words for word in _WORD.findall(name)):
            claims.append(name)
    return list(dict.fromkeys(claims))


def _sources(request: ModelRequest[Any]) -> list[str]:
    texts = [request.system_message.text] if request.system_message is not None else []
    texts += [message.text for message in request.messages]
    trace = cast("list[TraceStep]", request.state.get("trace") or [])
    return texts + [step["observation"] for step in trace]


def _observations(state: Mapping[str, Any]) -> str:
    trace = cast("list[TraceStep]", state.get("trace") or [])
    return "\n\n".join(
        OBSERVATION_PART.format(tool=step["tool"] or "tool", observation=step["observation"])
        for step in trace
        if step["status"] not in ("repeated", "repeated_failure")
    )


class GroundedAnswersMiddleware(StepMiddleware[GuardState]):
    """Revise an answer that states what no tool returned; say so if it cannot be fixed.

    Setup:
        .. code-block:: bash

            pip install langchain-agent-rules

    Instantiate:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_agent_rules.middleware import GroundedAnswersMiddleware

            agent = create_agent(model, tools, middleware=[GroundedAnswersMiddleware()])

    It reads the tools' results from the run's ``trace`` (`ToolGuardMiddleware`); runs
    whose tools never ran are left alone. Put it after `AgentRulesMiddleware`, so the
    revised answer is also held to the rules' checks.
    """

    state_schema = GuardState

    def __init__(self) -> None:
        super().__init__()
        self.tools = []

    @staticmethod
    def _applies(request: ModelRequest[Any], step: ModelStep) -> bool:
        return step.purpose == "turn" and bool(request.state.get("trace"))

    @staticmethod
    def _answer_of(response: ModelResponse[Any], step: ModelStep) -> AIMessage | None:
        """The model-written answer in ``response`` (not a fixed answer), or None."""
        reply = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        if reply is None or reply.tool_calls or reply.invalid_tool_calls:
            return None
        return reply if step.is_model_written(reply) else None

    @staticmethod
    def _request(
        request: ModelRequest[Any], answer: str, claims: Sequence[str]
    ) -> ModelRequest[Any]:
        message = GROUNDING_REQUEST.format(
            task=task_of(request.messages),
            answer=answer,
            observations=_observations(request.state),
            claims=", ".join(claims),
        )
        messages: list[AnyMessage] = [HumanMessage(message)]
        return request.override(
            messages=messages, system_message=None, tools=[], tool_choice=None, response_format=None
        )

    @staticmethod
    def _checked(response: ModelResponse[Any], reply: AIMessage, text: str) -> ModelResponse[Any]:
        checked = reply.model_copy(update={"content": text})
        result = [checked if m is reply else m for m in response.result]
        return ModelResponse(result=result, structured_response=response.structured_response)

    def _turn(self, request: ModelRequest[Any], step: ModelStep) -> TurnSteps:
        response: ModelResponse[Any]
        if not self._applies(request, step):
            response = yield Call(request)
            return response
        step.quiet = True
        response = yield Call(request)
        reply = self._answer_of(response, step)
        claims = ungrounded_claims(reply.text, _sources(request)) if reply else []
        if reply is None or not claims:
            return response
        if not step.has_room():
            return self._checked(response, reply, UNGROUNDED_ANSWER)
        revised: ModelResponse[Any] = yield Call(
            self._request(request, reply.text, claims), purpose="revision"
        )
        return self._checked(response, reply, self._grounded_or_not(_revision(revised), request))

    @staticmethod
    def _grounded_or_not(revised: str | None, request: ModelRequest[Any]) -> str:
        if revised and not ungrounded_claims(revised, _sources(request)):
            return revised
        return UNGROUNDED_ANSWER


def _revision(response: ModelResponse[Any]) -> str | None:
    reply = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    return None if reply is None else answer_text(reply)
