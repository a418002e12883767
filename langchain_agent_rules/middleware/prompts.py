"""Every piece of text the agent shows a model, as named templates.

Model-facing text is API: each template is tested word for word, so a change to one is
a visible decision. The wording follows measurements with a 1.5B model (see FACTS.md):
an observation that ends in a bare "Continue." made it call tools until the limit, while
one that says when to answer reached an answer in 8 of 10 tasks.
"""

from __future__ import annotations

__all__ = [
    "ANSWER_BLOCKED",
    "APPROVAL_DESCRIPTION",
    "APPROVAL_RULE_LINE",
    "APPROVAL_UNAVAILABLE",
    "ARGUMENTS_BAD_INTEGER",
    "ARGUMENTS_BAD_TEXT",
    "ARGUMENTS_BAD_VALUE",
    "ARGUMENTS_NOT_AN_OBJECT",
    "ARGUMENTS_TOO_DEEP",
    "ARGUMENTS_TOO_LARGE",
    "BUDGET_ANSWERS",
    "BUDGET_SPENT",
    "COMMAND_WITHOUT_TOOL_MESSAGE",
    "DEFAULT_SYSTEM_PROMPT",
    "GROUNDING_REQUEST",
    "INVALID_ARGS",
    "NOT_RUN",
    "NO_OBSERVATIONS",
    "PARSE_ERROR",
    "REJECTED",
    "REPEATED_CALL",
    "REPEATED_CALLS_ANSWER",
    "REPEATED_CALLS_REQUEST",
    "REPEATED_FAILURE",
    "REVIEW_PASSED",
    "REVIEW_REQUEST",
    "REVISION_REQUEST",
    "RULE_CONTENT_LINE",
    "SUMMARIZE_REQUEST",
    "TOOL_DENIED",
    "TOOL_ERROR",
    "TOOL_FAILURES_ANSWER",
    "TOOL_TIMEOUT",
    "TRUNCATION_MARKER",
    "UNGROUNDED_ANSWER",
    "UNKNOWN_TOOL",
]

# Said once, in the text protocol's instructions: with the sentence here as well, the
# embedded 1.5B model answered data questions with a bare ```sql block instead of a tool
# call (measured on the demo data; see the real-model suite).
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."

UNKNOWN_TOOL = 'ERROR: no tool named "{tool}". Available: {available}'
INVALID_ARGS = 'ERROR: invalid arguments for tool "{tool}": {message}'
TOOL_ERROR = "ERROR: {message}"
TOOL_TIMEOUT = 'ERROR: tool "{tool}" timed out after {seconds:g} s'
PARSE_ERROR = (
    "ERROR: your tool call could not be read: {problem}. To call a tool, reply with exactly "
    'one block:\n```tool\n{{"tool": "<tool name>", "args": {{...}}}}\n```\n'
    "Otherwise reply with FINAL: followed by your answer."
)
REPEATED_CALL = (
    'You already called tool "{tool}" with these arguments, so it was not run again. '
    "Answer now with FINAL: and what you know. Its result was:\n{observation}"
)
# A call identical to one that already failed in this run: measured with the embedded 1.5B
# model, it re-sent a failing query (`FROM dual`, `emp_id`) six times when told only the error.
REPEATED_FAILURE = (
    'You already called tool "{tool}" with these arguments and it failed, so it was not '
    "run again. The same call will fail the same way: change the arguments (use the names "
    "the error lists), use another tool, or answer with FINAL: and say what you could not "
    "find and why. The error was:\n{observation}"
)
REJECTED = (
    'ERROR: a human reviewer rejected the call to tool "{tool}"{reason}. Do not retry it; '
    "answer with what you know or use another tool."
)
COMMAND_WITHOUT_TOOL_MESSAGE = (
    'ERROR: tool "{tool}" returned a Command without a ToolMessage answering this call'
)
TRUNCATION_MARKER = "\n[truncated: showed {shown} of {total} bytes]"
# A call the previous run of a thread left without a result (cancelled, crashed, or a new
# task sent while it waited for approval): answered before the model is called again.
NOT_RUN = (
    'ERROR: the call to tool "{tool}" was not run: the run that made it ended before it '
    "had a result."
)

# Why no more tools can be used, per budget (the sentence after "No more tools can be used:").
BUDGET_SPENT = {
    "max_iterations": "all {max_iterations} tool iterations are spent",
    "max_model_calls": "this is the last of {max_model_calls} model calls",
    "max_total_tokens": "the {max_total_tokens}-token budget is spent",
}
SUMMARIZE_REQUEST = (
    "Task: {task}\n\nWhat the tools returned:\n{observations}\n\n"
    "No more tools can be used: {budget}. Using only "
    "what the tools returned, reply with FINAL: followed by your best answer to the task."
)
NO_OBSERVATIONS = "(nothing)"
# The answer when a budget ends a run without a model-written answer, per budget.
BUDGET_ANSWERS = {
    "max_iterations": "I stopped after {max_iterations} tool iterations without reaching an "
    "answer.",
    "max_model_calls": "I stopped after {max_model_calls} model calls without reaching an answer.",
    "max_total_tokens": "I stopped after using the {max_total_tokens}-token budget without "
    "reaching an answer.",
}

# A turn that only repeated earlier calls gets no further tool iteration: measured with the
# embedded 1.5B model, it re-sent the same block every turn until max_iterations.
REPEATED_CALLS_REQUEST = (
    "Task: {task}\n\nWhat the tools returned:\n{observations}\n\n"
    "No more tools will be run: your last tool call repeated an earlier one. Using only "
    "what the tools returned, reply with FINAL: followed by your best answer to the task. "
    "If they do not answer it, say plainly what you could not find and why."
)
# The answer when a run would end on a tool's error message: what failed, in words.
TOOL_FAILURES_ANSWER = "I could not find the answer: the {tool} call failed ({error})."
REPEATED_CALLS_ANSWER = (
    "I stopped because a tool call repeated an earlier one, without reaching an answer."
)

# Why a tool call's arguments were refused before the call was stored or run (the message
# of an INVALID_ARGS observation).
ARGUMENTS_NOT_AN_OBJECT = "the arguments must be a JSON object"
ARGUMENTS_TOO_DEEP = "the arguments are nested more than {limit} levels deep"
ARGUMENTS_TOO_LARGE = "the arguments are larger than {limit} bytes"
ARGUMENTS_BAD_TEXT = "the arguments contain text that is not valid Unicode (a lone surrogate)"
ARGUMENTS_BAD_INTEGER = "the arguments contain an integer outside the 64-bit range"
ARGUMENTS_BAD_VALUE = "the arguments contain a {kind}, which is not a JSON value"

# An answer that breaks a checked rule: one focused call per revision (the task, the answer
# and the failing rules' content; no tools, no history), a review of the rules without a
# check, and the answer given when revisions cannot fix it. Measured with the embedded 1.5B
# model: shown only the rules and the answer, it gave the answer back unchanged ("45.0",
# "9"); shown the task as well, it rewrote 4 answers of 4 ("The price of the teapot is
# 45.00 EUR.", "Nous avons 9 clients actifs.").
RULE_CONTENT_LINE = "- {content}"
REVISION_REQUEST = (
    "Task: {task}\nAnswer: {answer}\n\n"
    "Rewrite the answer so that it follows these rules, keeping its facts:\n{rules}\n\n"
    "Reply with FINAL: followed by the rewritten answer."
)
REVIEW_REQUEST = (
    "Task: {task}\nAnswer: {answer}\n\n"
    "Does the answer follow these rules?\n{rules}\n\n"
    "If it does, reply with OK only. Otherwise reply with FINAL: followed by the answer "
    "rewritten to follow them, keeping its facts."
)
REVIEW_PASSED = "OK"
ANSWER_BLOCKED = "I can't give that answer: it would break rule {rule_id}: {content}"

# A tool call that a TOOL rule's check stops before it runs.
TOOL_DENIED = (
    'ERROR: rule {rule_id} does not allow this call to tool "{tool}": {content}\n'
    "Do not retry it; answer with what you know or use another tool."
)
APPROVAL_UNAVAILABLE = (
    'ERROR: rule {rule_id} requires a human\'s approval for this call to tool "{tool}": '
    "{content}\nThis agent cannot ask for one, so the call was not run; answer with what "
    "you know or use another tool."
)

# What a human reviewer is shown (the description of LangChain's HITL action request).
APPROVAL_DESCRIPTION = 'Tool "{tool}" needs a human\'s approval before it runs.'
APPROVAL_RULE_LINE = "Rule {rule_id} asks for it: {content}"

# An answer that states numbers or names no tool returned (GroundedAnswersMiddleware): one
# focused call with what the tools did return, then a plain "not found".
GROUNDING_REQUEST = (
    "Task: {task}\nAnswer: {answer}\n\nWhat the tools returned:\n{observations}\n\n"
    "The answer states {claims}, which the tools did not return. Rewrite the answer using "
    "only what the tools returned; if they do not answer the task, say that you could not "
    "find it. Reply with FINAL: followed by the rewritten answer."
)
UNGROUNDED_ANSWER = "I could not find the answer in what the tools returned."
