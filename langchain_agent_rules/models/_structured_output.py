"""Structured output by grammar: a reply that is the schema's JSON object and nothing else.

``method="json_schema"`` holds the reply to the schema's keys and value types (as
llama.cpp's grammars do for OpenAI-style structured outputs); ``method="json_mode"`` to
any JSON object, the prompt saying which. The reply's text is the JSON, parsed into the
schema's class (pydantic) or a dict. ``method="function_calling"`` is LangChain's own:
a forced call of a tool named after the schema.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.utils.function_calling import convert_to_json_schema
from langchain_core.utils.pydantic import is_basemodel_subclass

__all__ = ["ANY_OBJECT", "JsonMethod", "json_structured_output"]

JsonMethod = Literal["json_schema", "json_mode"]
ANY_OBJECT: dict[str, Any] = {"type": "object"}


def json_structured_output(
    model: BaseChatModel,
    schema: dict[str, Any] | type,
    method: JsonMethod,
    include_raw: bool,
) -> Runnable[Any, Any]:
    """``model`` replying with ``schema``'s JSON by grammar, parsed (and raw if asked)."""
    response_format = convert_to_json_schema(schema) if method == "json_schema" else ANY_OBJECT
    llm = model.bind(
        response_format=response_format,
        ls_structured_output_format={"kwargs": {"method": method}, "schema": schema},
    )
    parser: Runnable[Any, Any]
    if isinstance(schema, type) and is_basemodel_subclass(schema):
        parser = PydanticOutputParser(pydantic_object=schema)
    else:
        parser = JsonOutputParser()
    if not include_raw:
        return llm | parser
    parsed = RunnablePassthrough.assign(
        parsed=itemgetter("raw") | parser, parsing_error=lambda _: None
    )
    unparsed = RunnablePassthrough.assign(parsed=lambda _: None)
    return RunnableMap(raw=llm) | parsed.with_fallbacks([unparsed], exception_key="parsing_error")
