"""The ``http_get`` tool: fetch one URL safely, with a bounded body.

Every hop (the first request and each redirect) passes the URL guard
(:mod:`langchain_agent_rules.tools.url_guard`), and the connection goes to the very
address the guard checked: the request URL is rewritten to that IP while the ``Host``
header and the TLS server name (``sni_hostname``, also used to verify the certificate)
keep the real host name. The body is streamed and reading stops just past
``max_bytes``, so an endless response costs no more than the limit.
"""

from __future__ import annotations

import asyncio
import codecs
import functools
import re
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import httpx
from langchain_core.tools import BaseTool
from langchain_core.tools.base import ArgsSchema
from langchain_core.tools.base import ToolException as _ToolException
from pydantic import BaseModel, Field, PrivateAttr

from langchain_agent_rules._json_text import compact_json
from langchain_agent_rules.errors import (
    InvalidToolCallError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.tools._arguments import parse_arguments, tool_json_schema
from langchain_agent_rules.tools._failures import driver_failure
from langchain_agent_rules.tools._text import utf8_prefix, valid_text
from langchain_agent_rules.tools.url_guard import (
    HOST_PATTERN_FORMS,
    CheckedURL,
    Resolver,
    check_url,
    host_pattern_problem,
    system_resolver,
)

__all__ = ["HTTP_GET_DESCRIPTION", "HttpGetInput", "HttpGetTool"]

MAX_REDIRECTS = 5
MAX_HEADERS = 20
MAX_HEADER_VALUE_BYTES = 2048

HTTP_GET_DESCRIPTION = (
    "Fetch a URL with HTTP GET. Returns JSON with the status code, the final url, the "
    "content_type, the body as text (at most {max_bytes} bytes; binary content is only "
    "described), truncated (true when the body was cut) and bytes_read. Only http:// and "
    "https:// URLs of {hosts}; redirects are followed (at most {max_redirects})."
)
PUBLIC_HOSTS = "public hosts"
LISTED_HOSTS = "these hosts: {hosts}"
BAD_HOST_PATTERN = "allowed_hosts entry {entry!r} {problem}; {forms}."
BINARY_BODY = "<binary content ({content_type}, {size}) not shown>"
TOO_MANY_REDIRECTS = "Stopped after {max_redirects} redirects; the last one pointed to {url}."
TIMED_OUT = "Fetching {url} took longer than the {timeout:g} s limit."
REQUEST_FAILED = "Fetching {url} failed: {detail}. Check the URL, or try another source."
BAD_HEADER = (
    "The header {name!r} is refused: {reason}. Allowed: at most {max_headers} headers with "
    "token names and single-line ASCII values; Host, hop-by-hop and encoding headers are set "
    "by the tool."
)

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TOOL_SET_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "accept-encoding",
        "proxy-authorization",
        "proxy-connection",
    }
)
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-www-form-urlencoded",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-ndjson",
        "application/graphql",
        "application/sql",
    }
)


class HttpGetInput(BaseModel):
    """Arguments of the ``http_get`` tool."""

    url: str = Field(description="The http:// or https:// URL to fetch.")
    headers: dict[str, str] | None = Field(
        default=None, description='Optional request headers, e.g. {"Accept": "text/html"}.'
    )


_ALLOWED = {
    "url": "a string with an http:// or https:// URL",
    "headers": "null or an object of header names and string values",
}


def validate_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Return the model's headers when every one is allowed.

    Raises:
        InvalidToolCallError: too many headers, a name that is not an HTTP token, a
            value with a control character (CR/LF header injection), a non-ASCII
            character or over ``MAX_HEADER_VALUE_BYTES``, or a header the tool sets
            itself (``Host``).
    """
    headers = dict(headers or {})
    if len(headers) > MAX_HEADERS:
        raise InvalidToolCallError(
            BAD_HEADER.format(
                name=f"({len(headers)} headers)", reason="too many", max_headers=MAX_HEADERS
            )
        )
    for name, value in headers.items():
        reason = None
        if not _TOKEN.fullmatch(name):
            reason = "the name is not a valid header name"
        elif name.lower() in _TOOL_SET_HEADERS or name.lower().startswith("proxy-"):
            reason = "the tool sets this header itself"
        elif any((ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F for char in value):
            reason = "the value contains a control character such as CR or LF"
        elif not value.isascii():
            reason = "the value has a non-ASCII character; percent-encode it"
        elif len(value) > MAX_HEADER_VALUE_BYTES:
            reason = f"the value is longer than {MAX_HEADER_VALUE_BYTES} bytes"
        if reason is not None:
            raise InvalidToolCallError(
                BAD_HEADER.format(name=name, reason=reason, max_headers=MAX_HEADERS)
            )
    return headers


def _is_text(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return (
        media.startswith("text/")
        or media in _TEXT_TYPES
        or media.endswith("+json")
        or media.endswith("+xml")
    )


class _BodyReader:
    """Collects at most ``max_bytes`` + 1 body bytes (the extra one shows there is more)."""

    def __init__(self, max_bytes: int, deadline: float, url: str, timeout: float) -> None:
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.url = url
        self.timeout = timeout
        self.data = bytearray()
        self.bytes_read = 0

    def feed(self, chunk: bytes) -> bool:
        """Take one chunk; return ``True`` once enough has been read."""
        if time.monotonic() > self.deadline:
            raise ToolExecutionError(TIMED_OUT.format(url=self.url, timeout=self.timeout))
        self.bytes_read += len(chunk)
        self.data += chunk[: self.max_bytes + 1 - len(self.data)]
        return len(self.data) > self.max_bytes

    def result(self, response: httpx.Response, url: str, content_type: str) -> dict[str, Any]:
        truncated = len(self.data) > self.max_bytes
        if b"\x00" in self.data:  # no or wrong content type, but clearly not text
            return _binary_result(response, url, content_type, self.bytes_read)
        encoding = _codec_name(response.charset_encoding)
        data = bytes(self.data)
        # Other charsets have other boundaries; errors="replace" covers a split character there.
        shown = utf8_prefix(data, self.max_bytes) if encoding == "utf-8" else data[: self.max_bytes]
        return {
            "status": response.status_code,
            "url": url,
            "content_type": content_type,
            "body": _decode(shown, encoding),
            "truncated": truncated,
            "bytes_read": self.bytes_read,
        }


def _codec_name(charset: str | None) -> str:
    """The canonical codec name of a response charset; UTF-8 when absent or unknown."""
    try:
        return codecs.lookup(charset or "utf-8").name
    except (LookupError, ValueError):  # ValueError: a NUL in the name
        return "utf-8"


def _decode(data: bytes, encoding: str) -> str:
    """Decode a body as valid text, whatever charset the server named.

    A codec that is not a text charset (``base64``, ``idna``, ``undefined``) reads the
    body as UTF-8; escape codecs (``unicode_escape``, ``utf-7``) can make lone
    surrogates, which are replaced like undecodable bytes.
    """
    try:
        text = data.decode(encoding, errors="replace")
    except (LookupError, UnicodeError):
        text = data.decode("utf-8", errors="replace")
    return valid_text(text)


def _binary_result(
    response: httpx.Response, url: str, content_type: str, bytes_read: int
) -> dict[str, Any]:
    length = response.headers.get("content-length")
    size = f"{length} bytes" if length and length.isdigit() else "size unknown"
    encoding = response.headers.get("content-encoding", "identity").lower()
    label = content_type if encoding == "identity" else f"{content_type}, {encoding}-encoded"
    return {
        "status": response.status_code,
        "url": url,
        "content_type": content_type,
        "body": BINARY_BODY.format(content_type=label or "no content type", size=size),
        "truncated": False,
        "bytes_read": bytes_read,
    }


def _transport_error(url: str, error: httpx.HTTPError, timeout: float) -> ToolExecutionError:
    return driver_failure(
        error,
        timed_out=isinstance(error, httpx.TimeoutException),
        timeout_message=TIMED_OUT.format(url=url, timeout=timeout),
        template=REQUEST_FAILED,
        url=url,
    )


@functools.cache
def _default_ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~130 ms; one verifying context serves every call and thread.
    return httpx.create_ssl_context()


def _skip_body(response: httpx.Response, content_type: str) -> bool:
    encoding = response.headers.get("content-encoding", "identity").lower()
    return encoding != "identity" or (bool(content_type) and not _is_text(content_type))


class HttpGetTool(BaseTool):
    """Fetch a URL with HTTP GET: no private networks, bounded time and size.

    Setup:
        Needs only httpx (a dependency of this package).

    Instantiate:
        .. code-block:: python

            from langchain_agent_rules.tools.http_get import HttpGetTool

            tool = HttpGetTool(allowed_hosts=["api.example.com", "*.wikipedia.org"],
                               max_bytes=8192, timeout=30.0)

    Invoke:
        .. code-block:: python

            tool.invoke({"url": "https://api.example.com/items?limit=5"})
            # '{"status":200,"url":"https://api.example.com/items?limit=5",
            #   "content_type":"application/json","body":"[...]","truncated":false,
            #   "bytes_read":512}'

    Output:
        Compact JSON text (what a ``ToolMessage`` carries to the model), with the same
        result as a dict in the message's ``artifact`` (``response_format=
        "content_and_artifact"``, as for every tool of this package).

    Errors:
        Invalid arguments or a refused URL or header raise ``InvalidToolCallError``; a
        connection failure, timeout or too many redirects raises ``ToolExecutionError``;
        nothing else escapes, whatever the server sends. An HTTP error status
        (404, 500) is a normal result. ``handle_tool_error`` defaults to ``True`` as for
        all of this package's tools: ``invoke`` returns the message (an error
        ``ToolMessage`` for a tool call) so an agent's model reads it; pass
        ``handle_tool_error=False`` to have ``invoke`` raise.

    Args:
        allowed_hosts: when set, only these hosts: exact names (which may then be
            private, e.g. ``127.0.0.1`` in tests) or ``*.example.com`` for subdomains.
            ``None`` admits every public host.
        max_bytes: the most body bytes shown; reading stops just past it.
        timeout: seconds for the whole fetch, redirects and body included.
        resolver: host name -> IP addresses; the system resolver by default. A seam for
            tests and for custom DNS.
        ssl_context: the context that verifies servers' certificates, for example one
            that trusts an internal CA; by default the CA bundle httpx ships (certifi).
        **kwargs: other ``BaseTool`` fields (``name``, ``handle_tool_error``, ...).
    """

    name: str = "http_get"
    description: str = ""
    args_schema: ArgsSchema | None = tool_json_schema(HttpGetInput)
    handle_tool_error: bool | str | Callable[[_ToolException], str] | None = True
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    allowed_hosts: tuple[str, ...] | None = None
    max_bytes: int = 8192
    timeout: float = 30.0
    _resolver: Resolver = PrivateAttr()
    _ssl_context: ssl.SSLContext | None = PrivateAttr()

    def __init__(
        self,
        allowed_hosts: Sequence[str] | None = None,
        max_bytes: int = 8192,
        timeout: float = 30.0,
        resolver: Resolver = system_resolver,
        ssl_context: ssl.SSLContext | None = None,
        **kwargs: Any,
    ) -> None:
        if max_bytes < 1:
            raise ToolConfigurationError(f"max_bytes must be at least 1; got {max_bytes}.")
        if not timeout > 0:
            raise ToolConfigurationError(f"timeout must be a positive number; got {timeout}.")
        if isinstance(allowed_hosts, str) or (
            allowed_hosts is not None and not all(isinstance(h, str) and h for h in allowed_hosts)
        ):
            raise ToolConfigurationError(
                "allowed_hosts must be a list of host names such as ['api.example.com', "
                f"'*.example.org'] or None; got {allowed_hosts!r}."
            )
        for entry in allowed_hosts or ():
            problem = host_pattern_problem(entry)
            if problem is not None:
                raise ToolConfigurationError(
                    BAD_HOST_PATTERN.format(entry=entry, problem=problem, forms=HOST_PATTERN_FORMS)
                )
        hosts = (
            PUBLIC_HOSTS
            if allowed_hosts is None
            else LISTED_HOSTS.format(hosts=", ".join(allowed_hosts))
        )
        kwargs.setdefault(
            "description",
            HTTP_GET_DESCRIPTION.format(
                max_bytes=max_bytes, hosts=hosts, max_redirects=MAX_REDIRECTS
            ),
        )
        super().__init__(
            allowed_hosts=None if allowed_hosts is None else tuple(allowed_hosts),
            max_bytes=max_bytes,
            timeout=timeout,
            **kwargs,
        )
        self._resolver = resolver
        self._ssl_context = ssl_context

    def _check(self, url: str) -> CheckedURL:
        return check_url(url, self.allowed_hosts, self._resolver)

    def _request(
        self,
        client: httpx.Client | httpx.AsyncClient,
        target: CheckedURL,
        headers: dict[str, str],
        deadline: float,
    ) -> httpx.Request:
        """Build a request to the checked address that still names the real host."""
        extensions: dict[str, Any] = {}
        if target.url.scheme == "https":
            extensions["sni_hostname"] = target.host
        remaining = max(deadline - time.monotonic(), 0.001)
        return client.build_request(
            "GET",
            target.url.copy_with(host=str(target.address)),
            headers={
                **headers,
                "Host": target.url.netloc.decode("ascii"),
                "Accept-Encoding": "identity",
            },
            extensions=extensions,
            timeout=httpx.Timeout(remaining),
        )

    def _next_hop(
        self, response: httpx.Response, target: CheckedURL, headers: dict[str, str], hop: int
    ) -> tuple[str, dict[str, str]]:
        # httpx has already refused an unparsable Location (RemoteProtocolError).
        next_url = target.url.join(response.headers["location"])
        url = str(next_url)
        if hop == MAX_REDIRECTS:
            raise ToolExecutionError(
                TOO_MANY_REDIRECTS.format(max_redirects=MAX_REDIRECTS, url=url)
            )
        # The model's headers (perhaps credentials) go only to the host they were meant for.
        same_host = next_url.host.lower().rstrip(".") == target.host
        return url, headers if same_host else {}

    def _client_options(self) -> dict[str, Any]:
        # trust_env=False: no proxy from the environment, which would bypass the pinned address.
        verify = self._ssl_context or _default_ssl_context()
        return {"verify": verify, "trust_env": False, "follow_redirects": False}

    def _run(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        arguments = parse_arguments(HttpGetInput, args, kwargs, self.name, _ALLOWED)
        result = self._fetch(arguments.url, arguments.headers)
        return compact_json(result), result

    async def _arun(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        arguments = parse_arguments(HttpGetInput, args, kwargs, self.name, _ALLOWED)
        result = await self._afetch(arguments.url, arguments.headers)
        return compact_json(result), result

    def _fetch(self, url: str, headers: dict[str, str] | None) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        request_headers = validate_headers(headers)
        try:
            with httpx.Client(**self._client_options()) as client:
                for hop in range(MAX_REDIRECTS + 1):
                    target = self._check(url)
                    request = self._request(client, target, request_headers, deadline)
                    response = client.send(request, stream=True)
                    try:
                        if response.is_redirect:
                            url, request_headers = self._next_hop(
                                response, target, request_headers, hop
                            )
                            continue
                        return self._read(response, str(target.url), deadline)
                    finally:
                        response.close()
        except httpx.HTTPError as error:
            raise _transport_error(url, error, self.timeout) from None
        raise AssertionError("unreachable: the redirect loop returns or raises")

    def _read(self, response: httpx.Response, url: str, deadline: float) -> dict[str, Any]:
        content_type = response.headers.get("content-type", "")
        if _skip_body(response, content_type):
            return _binary_result(response, url, content_type, 0)
        reader = _BodyReader(self.max_bytes, deadline, url, self.timeout)
        for chunk in response.iter_raw():
            if reader.feed(chunk):
                break
        return reader.result(response, url, content_type)

    async def _afetch(self, url: str, headers: dict[str, str] | None) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        request_headers = validate_headers(headers)
        try:
            async with httpx.AsyncClient(**self._client_options()) as client:
                for hop in range(MAX_REDIRECTS + 1):
                    # The resolver may block on DNS; keep it off the event loop.
                    target = await asyncio.to_thread(self._check, url)
                    request = self._request(client, target, request_headers, deadline)
                    response = await client.send(request, stream=True)
                    try:
                        if response.is_redirect:
                            url, request_headers = self._next_hop(
                                response, target, request_headers, hop
                            )
                            continue
                        return await self._aread(response, str(target.url), deadline)
                    finally:
                        await response.aclose()
        except httpx.HTTPError as error:
            raise _transport_error(url, error, self.timeout) from None
        raise AssertionError("unreachable: the redirect loop returns or raises")

    async def _aread(self, response: httpx.Response, url: str, deadline: float) -> dict[str, Any]:
        content_type = response.headers.get("content-type", "")
        if _skip_body(response, content_type):
            return _binary_result(response, url, content_type, 0)
        reader = _BodyReader(self.max_bytes, deadline, url, self.timeout)
        async for chunk in response.aiter_raw():
            if reader.feed(chunk):
                break
        return reader.result(response, url, content_type)
