"""http_get against a real HTTP server on 127.0.0.1; names resolve only through fakes."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_agent_rules.errors import (
    InvalidToolCallError,
    ToolConfigurationError,
    ToolExecutionError,
)
from langchain_agent_rules.tools.http_get import (
    BAD_HEADER,
    BINARY_BODY,
    HTTP_GET_DESCRIPTION,
    MAX_HEADERS,
    REQUEST_FAILED,
    TIMED_OUT,
    TOO_MANY_REDIRECTS,
    HttpGetTool,
)

from .conftest import PNG_BYTES, UTF8_TEXT, LocalServer, TlsServer


def loopback_resolver(host: str) -> Sequence[str]:
    """Every test name lives on 127.0.0.1, except the one that must never be reached."""
    return {"app.test": ["127.0.0.1"], "evil.test": ["10.0.0.9"]}[host]


def make_tool(**kwargs: Any) -> HttpGetTool:
    options: dict[str, Any] = {
        "allowed_hosts": ["127.0.0.1", "app.test", "*.test"],
        "resolver": loopback_resolver,
        "handle_tool_error": False,
        "timeout": 5.0,
    }
    options.update(kwargs)
    return HttpGetTool(**options)


def test_name_is_http_get() -> None:
    assert make_tool().name == "http_get"


def test_a_text_page_is_returned_with_every_field(local_server: LocalServer) -> None:
    url = local_server.url("/json")
    assert json.loads(make_tool().invoke({"url": url})) == {
        "status": 200,
        "url": url,
        "content_type": "application/json",
        "body": '{"ok": true}',
        "truncated": False,
        "bytes_read": 12,
    }


def test_an_http_error_status_is_a_result(local_server: LocalServer) -> None:
    result = json.loads(make_tool().invoke({"url": local_server.url("/status/404")}))
    assert (result["status"], result["body"]) == (404, "status body")


def test_the_body_is_cut_at_max_bytes(local_server: LocalServer) -> None:
    result = json.loads(make_tool(max_bytes=10).invoke({"url": local_server.url("/text?size=100")}))
    assert result["body"] == "x" * 10
    assert result["truncated"] is True


@pytest.mark.parametrize("max_bytes", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
def test_the_cut_never_splits_a_utf8_character(local_server: LocalServer, max_bytes: int) -> None:
    result = json.loads(make_tool(max_bytes=max_bytes).invoke({"url": local_server.url("/utf8")}))
    shown = result["body"].encode("utf-8")
    assert len(shown) <= max_bytes
    assert UTF8_TEXT.encode("utf-8").startswith(shown)
    assert len(shown) > max_bytes - 4
    assert result["truncated"] is True


def test_an_endless_body_stops_just_past_the_limit(local_server: LocalServer) -> None:
    result = json.loads(make_tool(max_bytes=8192).invoke({"url": local_server.url("/endless")}))
    assert result["body"] == "z" * 8192
    assert result["truncated"] is True
    assert result["bytes_read"] < 1024 * 1024


def test_a_declared_charset_is_decoded(local_server: LocalServer) -> None:
    assert json.loads(make_tool().invoke({"url": local_server.url("/latin1")}))["body"] == "café"


def test_a_non_utf8_charset_is_cut_by_bytes_not_by_utf8_rules(local_server: LocalServer) -> None:
    result = json.loads(make_tool(max_bytes=3).invoke({"url": local_server.url("/latin1-long")}))
    assert (result["body"], result["truncated"]) == ("ééé", True)


def test_a_binary_content_type_is_summarised_not_read(local_server: LocalServer) -> None:
    result = json.loads(make_tool().invoke({"url": local_server.url("/binary")}))
    assert result["body"] == BINARY_BODY.format(
        content_type="image/png", size=f"{len(PNG_BYTES)} bytes"
    )
    assert result["body"] == "<binary content (image/png, 1032 bytes) not shown>"
    assert result["bytes_read"] == 0


def test_binary_bytes_without_a_content_type_are_summarised(local_server: LocalServer) -> None:
    result = json.loads(make_tool().invoke({"url": local_server.url("/sniffed-binary")}))
    assert result["body"] == "<binary content (no content type, 7 bytes) not shown>"


def test_a_compressed_body_is_summarised(local_server: LocalServer) -> None:
    result = json.loads(make_tool().invoke({"url": local_server.url("/gzip")}))
    assert result["body"].startswith("<binary content (text/plain, gzip-encoded,")


def test_redirects_are_followed_to_the_final_url(local_server: LocalServer) -> None:
    result = json.loads(make_tool().invoke({"url": local_server.url("/chain/4")}))
    assert result["url"] == local_server.url("/text?size=5")
    assert result["body"] == "xxxxx"


def test_more_than_five_redirects_is_an_execution_error(local_server: LocalServer) -> None:
    with pytest.raises(ToolExecutionError) as caught:
        make_tool().invoke({"url": local_server.url("/chain/5")})
    assert str(caught.value) == TOO_MANY_REDIRECTS.format(
        max_redirects=5, url=local_server.url("/text?size=5")
    )


def test_a_redirect_to_a_host_outside_the_allow_list_is_refused(
    local_server: LocalServer,
) -> None:
    tool = make_tool(allowed_hosts=["127.0.0.1"])
    with pytest.raises(InvalidToolCallError, match="'localhost' is not allowed"):
        tool.invoke({"url": local_server.url("/redirect?to=http://localhost/")})


def test_a_redirect_to_a_private_address_is_refused_before_connecting(
    local_server: LocalServer,
) -> None:
    with pytest.raises(InvalidToolCallError, match=re.escape("resolves to 10.0.0.9")):
        make_tool().invoke({"url": local_server.url("/redirect?to=http://evil.test/")})


@pytest.mark.parametrize(
    "target", ["http://169.254.169.254/latest/meta-data/", "file:///etc/passwd", "http://0/"]
)
def test_a_redirect_hop_is_checked_like_the_first_url(
    local_server: LocalServer, target: str
) -> None:
    with pytest.raises(InvalidToolCallError):
        make_tool().invoke({"url": local_server.url(f"/redirect?to={target}")})


def test_a_redirect_to_an_invalid_url_is_an_execution_error(local_server: LocalServer) -> None:
    url = local_server.url("/bad-redirect")
    with pytest.raises(ToolExecutionError) as caught:
        make_tool().invoke({"url": url})
    assert str(caught.value) == REQUEST_FAILED.format(
        url=url, detail="Invalid URL in location header: Invalid port: 'port'"
    )


@pytest.mark.parametrize("status", [301, 303, 307, 308])
def test_every_redirect_status_is_followed(local_server: LocalServer, status: int) -> None:
    target = local_server.url("/json")
    result = json.loads(
        make_tool().invoke({"url": local_server.url(f"/redirect?status={status}&to={target}")})
    )
    assert (result["url"], result["body"]) == (target, '{"ok": true}')


def test_the_request_goes_to_the_checked_address_with_the_real_host_name(
    local_server: LocalServer,
) -> None:
    calls: list[str] = []

    def counting_resolver(host: str) -> Sequence[str]:
        calls.append(host)
        return ["127.0.0.1"] if len(calls) == 1 else ["203.0.113.7"]

    tool = make_tool(allowed_hosts=["app.test"], resolver=counting_resolver)
    result = json.loads(tool.invoke({"url": f"http://app.test:{local_server.port}/headers"}))
    assert calls == ["app.test"]
    assert json.loads(result["body"])["host"] == f"app.test:{local_server.port}"
    assert result["url"] == f"http://app.test:{local_server.port}/headers"


def test_an_ipv6_loopback_host_named_in_the_allow_list_is_fetched(
    local_server_v6: LocalServer,
) -> None:
    url = local_server_v6.url("/json")
    result = json.loads(make_tool(allowed_hosts=["::1"]).invoke({"url": url}))
    assert (result["status"], result["url"], result["body"]) == (200, url, '{"ok": true}')


def test_model_headers_are_sent_and_encoding_is_identity(local_server: LocalServer) -> None:
    result = json.loads(
        make_tool(max_bytes=4096).invoke(
            {"url": local_server.url("/headers"), "headers": {"Accept": "text/x-test"}}
        )
    )
    received = json.loads(result["body"])
    assert received["accept"] == "text/x-test"
    assert received["accept-encoding"] == "identity"


def test_model_headers_are_dropped_on_a_redirect_to_another_host(
    local_server: LocalServer,
) -> None:
    target = f"http://app.test:{local_server.port}/headers"
    result = json.loads(
        make_tool(max_bytes=4096).invoke(
            {"url": local_server.url(f"/redirect?to={target}"), "headers": {"X-Token": "secret"}}
        )
    )
    assert "x-token" not in json.loads(result["body"])


@pytest.mark.parametrize(
    ("headers", "name", "reason"),
    [
        ({"X-A": "a\r\nX-Injected: 1"}, "X-A", "the value contains a control character"),
        ({"X-A": "a\nb"}, "X-A", "the value contains a control character"),
        ({"Host": "internal"}, "Host", "the tool sets this header itself"),
        ({"host": "internal"}, "host", "the tool sets this header itself"),
        ({"Accept-Encoding": "gzip"}, "Accept-Encoding", "the tool sets this header itself"),
        ({"Proxy-Foo": "x"}, "Proxy-Foo", "the tool sets this header itself"),
        ({"Bad Name": "x"}, "Bad Name", "the name is not a valid header name"),
        ({"X-Long": "a" * 3000}, "X-Long", "the value is longer than 2048 bytes"),
    ],
)
def test_bad_headers_are_refused(headers: dict[str, str], name: str, reason: str) -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        make_tool().invoke({"url": "http://127.0.0.1:1/", "headers": headers})
    assert str(caught.value).startswith(f"The header {name!r} is refused: {reason}")


def test_more_than_twenty_headers_are_refused() -> None:
    headers = {f"X-H{i}": "v" for i in range(MAX_HEADERS + 1)}
    with pytest.raises(InvalidToolCallError) as caught:
        make_tool().invoke({"url": "http://127.0.0.1:1/", "headers": headers})
    assert str(caught.value) == BAD_HEADER.format(
        name="(21 headers)", reason="too many", max_headers=20
    )
    assert str(caught.value) == (
        "The header '(21 headers)' is refused: too many. Allowed: at most 20 headers with token "
        "names and single-line ASCII values; Host, hop-by-hop and encoding headers are set by "
        "the tool."
    )


def test_a_slow_body_is_stopped_at_the_timeout(local_server: LocalServer) -> None:
    url = local_server.url("/slow")
    with pytest.raises(ToolExecutionError) as caught:
        make_tool(timeout=0.4).invoke({"url": url})
    assert str(caught.value) == TIMED_OUT.format(url=url, timeout=0.4)


def test_a_stalled_body_is_stopped_at_the_timeout(local_server: LocalServer) -> None:
    with pytest.raises(ToolExecutionError, match=re.escape("longer than the 0.4 s limit")):
        make_tool(timeout=0.4).invoke({"url": local_server.url("/stall")})


def test_a_refused_connection_is_an_execution_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    with pytest.raises(ToolExecutionError) as caught:
        make_tool().invoke({"url": url})
    assert str(caught.value).startswith(f"Fetching {url} failed: ")


def test_private_hosts_are_refused_without_an_allow_list(local_server: LocalServer) -> None:
    tool = HttpGetTool(handle_tool_error=False)
    with pytest.raises(InvalidToolCallError, match=re.escape("resolves to 127.0.0.1")):
        tool.invoke({"url": local_server.url("/json")})


def test_a_refusal_is_an_error_tool_message_by_default(local_server: LocalServer) -> None:
    message = HttpGetTool().invoke(
        {
            "type": "tool_call",
            "id": "c1",
            "name": "http_get",
            "args": {"url": local_server.url("/json")},
        }
    )
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert "Only public addresses may be fetched." in message.text


def test_a_result_tool_message_carries_compact_json_and_the_dict(
    local_server: LocalServer,
) -> None:
    url = local_server.url("/json")
    message = make_tool().invoke(
        {"type": "tool_call", "id": "c1", "name": "http_get", "args": {"url": url}}
    )
    assert isinstance(message, ToolMessage)
    assert message.text == (
        f'{{"status":200,"url":"{url}","content_type":"application/json",'
        '"body":"{\\"ok\\": true}","truncated":false,"bytes_read":12}'
    )
    assert message.artifact == json.loads(message.text)


def test_description_names_the_limits_and_hosts() -> None:
    tool = HttpGetTool(allowed_hosts=["api.example.com"])
    assert tool.description == HTTP_GET_DESCRIPTION.format(
        max_bytes=8192, hosts="these hosts: api.example.com", max_redirects=5
    )
    assert HttpGetTool().description == (
        "Fetch a URL with HTTP GET. Returns JSON with the status code, the final url, the "
        "content_type, the body as text (at most 8192 bytes; binary content is only "
        "described), truncated (true when the body was cut) and bytes_read. Only http:// and "
        "https:// URLs of public hosts; redirects are followed (at most 5)."
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_bytes": 0}, "max_bytes must be at least 1"),
        ({"timeout": -1}, "timeout must be a positive number"),
        ({"allowed_hosts": "example.com"}, "allowed_hosts must be a list"),
        ({"allowed_hosts": [""]}, "allowed_hosts must be a list"),
    ],
)
def test_bad_options_are_configuration_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolConfigurationError, match=message):
        HttpGetTool(**kwargs)


def test_an_allowed_hosts_entry_that_could_never_match_is_refused_word_for_word() -> None:
    with pytest.raises(ToolConfigurationError) as caught:
        HttpGetTool(allowed_hosts=["api.example.com", "*"])

    assert str(caught.value) == (
        "allowed_hosts entry '*' would allow every host; give host names such as "
        "api.example.com, *.example.com for every subdomain of example.com, or IP addresses."
    )


async def test_ainvoke_fetches_and_follows_redirects(local_server: LocalServer) -> None:
    result = json.loads(await make_tool().ainvoke({"url": local_server.url("/chain/2")}))
    assert (result["status"], result["body"]) == (200, "xxxxx")


async def test_ainvoke_stops_an_endless_body(local_server: LocalServer) -> None:
    result = json.loads(
        await make_tool(max_bytes=100).ainvoke({"url": local_server.url("/endless")})
    )
    assert (result["body"], result["truncated"]) == ("z" * 100, True)


async def test_ainvoke_summarises_binary(local_server: LocalServer) -> None:
    result = json.loads(await make_tool().ainvoke({"url": local_server.url("/binary")}))
    assert result["body"].startswith("<binary content (image/png")


async def test_ainvoke_stops_a_slow_body(local_server: LocalServer) -> None:
    with pytest.raises(ToolExecutionError, match=re.escape("longer than the 0.4 s limit")):
        await make_tool(timeout=0.4).ainvoke({"url": local_server.url("/slow")})


async def test_ainvoke_refuses_a_private_redirect(local_server: LocalServer) -> None:
    with pytest.raises(InvalidToolCallError):
        await make_tool().ainvoke({"url": local_server.url("/redirect?to=http://evil.test/")})


class TestHttpGetToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return HttpGetTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"allowed_hosts": ["127.0.0.1"]}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"url": "http://127.0.0.1:8000/", "headers": {"Accept": "text/plain"}}


def test_https_goes_to_the_checked_address_and_verifies_the_real_host_name(
    tls_server: TlsServer,
) -> None:
    tool = make_tool(allowed_hosts=["app.test"], ssl_context=tls_server.client_context)
    url = f"https://app.test:{tls_server.port}/json"
    result = json.loads(tool.invoke({"url": url}))
    assert (result["status"], result["url"], result["body"]) == (200, url, '{"ok": true}')
    assert tls_server.server_names[-1] == "app.test"


def test_https_refuses_a_certificate_for_another_name(tls_server: TlsServer) -> None:
    def other_resolver(host: str) -> Sequence[str]:
        return ["127.0.0.1"]

    tool = make_tool(
        allowed_hosts=["other.test"],
        resolver=other_resolver,
        ssl_context=tls_server.client_context,
    )
    with pytest.raises(ToolExecutionError, match="CERTIFICATE_VERIFY_FAILED"):
        tool.invoke({"url": f"https://other.test:{tls_server.port}/json"})


async def test_ainvoke_over_https_verifies_the_real_host_name(tls_server: TlsServer) -> None:
    tool = make_tool(allowed_hosts=["app.test"], ssl_context=tls_server.client_context)
    result = json.loads(await tool.ainvoke({"url": f"https://app.test:{tls_server.port}/json"}))
    assert result["body"] == '{"ok": true}'
