"""The URL guard as pure functions: no test here opens a socket or asks real DNS."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

import pytest

from langchain_agent_rules.errors import InvalidToolCallError, ToolExecutionError
from langchain_agent_rules.tools.url_guard import (
    HOST_NOT_ALLOWED,
    PRIVATE_ADDRESS,
    check_url,
    host_matches,
    host_pattern_problem,
    is_public_address,
    parse_ip_literal,
)

FAKE_DNS: dict[str, list[str]] = {
    "public.example": ["93.184.216.34"],
    "v6.example": ["2606:2800:220:1:248:1893:25c8:1946"],
    "localhost": ["127.0.0.1", "::1"],
    "metadata.google.internal": ["169.254.169.254"],
    "rebind.example": ["93.184.216.34", "127.0.0.1"],
    "internal.example": ["10.0.0.5"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "127.0.0.1.nip.io": ["127.0.0.1"],
    "api.partner.example": ["10.1.2.3"],
}


def fake_resolver(host: str) -> Sequence[str]:
    if host not in FAKE_DNS:
        raise OSError(f"[Errno -2] Name or service not known: {host}")
    return FAKE_DNS[host]


def no_resolver(host: str) -> Sequence[str]:
    raise AssertionError(f"the resolver must not be asked about {host}")


SSRF_URLS = [
    "http://127.0.0.1/",
    "http://127.0.0.1:22/",
    "http://localhost/",
    "http://LOCALHOST./admin",
    "http://127.0.0.1.nip.io/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0x0.0x0.0x1/",
    "http://127.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::1]:8080/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/",
    "http://169.254.43518/",
    "http://2852039166/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://[fe80::1]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://3232235777/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[2002:7f00:1::]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2001:db8::1]/",
    "http://192.0.2.1/",
    "http://198.18.0.1/",
    "http://rebind.example/",
    "http://internal.example/",
    "http://mapped.example/",
    "http://user:pass@public.example/",
    "http://public.example@127.0.0.1/",
    "file:///etc/passwd",
    "gopher://127.0.0.1:70/_stats",
    "ftp://public.example/",
    "dict://127.0.0.1:11211/stat",
    "javascript:alert(1)",
    "http:///no-host",
    "//public.example/",
    "",
]


def test_the_ssrf_corpus_has_at_least_forty_urls() -> None:
    assert len(SSRF_URLS) >= 40


@pytest.mark.parametrize("url", SSRF_URLS)
def test_every_ssrf_url_is_refused(url: str) -> None:
    with pytest.raises(InvalidToolCallError):
        check_url(url, None, fake_resolver)


@pytest.mark.parametrize("url", SSRF_URLS)
def test_every_ssrf_url_is_refused_under_a_wildcard_allow_list(url: str) -> None:
    with pytest.raises(InvalidToolCallError):
        check_url(url, ["*.example", "*.nip.io", "*.internal"], fake_resolver)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("0", "0.0.0.0"),
        ("169.254.43518", "169.254.169.254"),
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("example.com", None),
        ("1.2.3.4.5", None),
        ("08.1.1.1", None),
        ("256.1.1.1", None),
        ("0x100000000", None),
    ],
)
def test_numeric_host_spellings_are_decoded(host: str, expected: str | None) -> None:
    address = parse_ip_literal(host)
    assert (None if address is None else str(address)) == expected


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.251",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:10.0.0.1",
        "2002:c0a8:101::",
        "64:ff9b::7f00:1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
    ],
)
def test_non_public_addresses_are_classified_private(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is False


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::",
    ],
)
def test_public_addresses_are_classified_public(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is True


def test_a_public_host_is_admitted_with_the_address_to_connect_to() -> None:
    checked = check_url("https://Public.Example./page?q=1", None, fake_resolver)
    assert checked.host == "public.example"
    assert str(checked.address) == "93.184.216.34"
    assert str(checked.url) == "https://public.example./page?q=1"


def test_an_ipv6_only_public_host_is_admitted() -> None:
    checked = check_url("http://v6.example/", None, fake_resolver)
    assert checked.address == ipaddress.ip_address("2606:2800:220:1:248:1893:25c8:1946")


def test_numeric_hosts_are_never_sent_to_the_resolver() -> None:
    with pytest.raises(InvalidToolCallError):
        check_url("http://2130706433/", None, no_resolver)
    assert str(check_url("http://8.8.8.8/", None, no_resolver).address) == "8.8.8.8"


def test_a_name_resolving_to_any_private_address_is_refused_with_that_address() -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_url("http://rebind.example/", None, fake_resolver)
    assert str(caught.value) == PRIVATE_ADDRESS.format(host="rebind.example", address="127.0.0.1")
    assert str(caught.value) == (
        "The host 'rebind.example' is refused: it resolves to 127.0.0.1, a private, loopback, "
        "link-local, multicast, reserved or other special-purpose address. Only public "
        "addresses may be fetched."
    )


def test_a_host_outside_the_allow_list_is_refused_with_the_list() -> None:
    with pytest.raises(InvalidToolCallError) as caught:
        check_url("https://public.example/", ["api.example.com", "*.docs.example"], fake_resolver)
    assert str(caught.value) == HOST_NOT_ALLOWED.format(
        host="public.example", allowed="api.example.com, *.docs.example"
    )


def test_a_host_named_exactly_in_the_allow_list_may_be_private() -> None:
    checked = check_url("http://api.partner.example/", ["api.partner.example"], fake_resolver)
    assert str(checked.address) == "10.1.2.3"
    assert str(check_url("http://127.0.0.1:8000/", ["127.0.0.1"], no_resolver).address) == (
        "127.0.0.1"
    )


def test_a_host_admitted_by_a_wildcard_must_still_be_public() -> None:
    with pytest.raises(InvalidToolCallError, match=re.escape("resolves to 10.1.2.3")):
        check_url("http://api.partner.example/", ["*.partner.example"], fake_resolver)


@pytest.mark.parametrize(
    ("host", "allowed", "expected"),
    [
        ("api.example.com", ["api.example.com"], "api.example.com"),
        ("API.Example.COM.", ["api.example.com"], "api.example.com"),
        ("a.b.example.com", ["*.example.com"], "*.example.com"),
        ("example.com", ["*.example.com"], None),
        ("badexample.com", ["*.example.com"], None),
        ("example.com.evil.net", ["example.com"], None),
        ("::1", ["[::1]"], "[::1]"),
    ],
)
def test_allow_list_matching(host: str, allowed: list[str], expected: str | None) -> None:
    assert host_matches(host, allowed) == expected


def test_an_unresolvable_host_is_an_execution_error() -> None:
    with pytest.raises(ToolExecutionError, match="could not be resolved"):
        check_url("http://nowhere.example/", None, fake_resolver)


def test_a_resolver_with_no_answer_is_an_execution_error() -> None:
    with pytest.raises(ToolExecutionError, match="no addresses"):
        check_url("http://empty.example/", None, lambda host: [])


# Special-purpose ranges that some Python versions' ipaddress counts as global, or that only
# embed the address packets really go to. Each must be refused on every supported Python.
SPECIAL_PURPOSE = [
    ("192.0.0.8", "IETF protocol assignments, 192.0.0.0/24"),
    ("192.0.0.9", "IETF protocol assignments (PCP anycast), 192.0.0.0/24"),
    ("192.0.0.170", "NAT64 discovery, 192.0.0.0/24"),
    ("198.18.0.1", "benchmarking, 198.18.0.0/15"),
    ("198.19.255.254", "benchmarking, 198.18.0.0/15"),
    ("100.64.0.1", "shared address space (CGNAT), 100.64.0.0/10"),
    ("100.127.255.254", "shared address space (CGNAT), 100.64.0.0/10"),
    ("192.88.99.1", "deprecated 6to4 relay anycast, 192.88.99.0/24"),
    ("224.0.0.1", "multicast"),
    ("233.252.0.1", "multicast (MCAST-TEST-NET)"),
    ("240.0.0.1", "reserved"),
    ("fec0::1", "deprecated site-local, fec0::/10"),
    ("3fff::1", "documentation, 3fff::/20"),
    ("ff0e::1", "global-scope multicast"),
    ("2002:a00:1::", "6to4 embedding 10.0.0.1"),
    ("2002:6440:1::", "6to4 embedding 100.64.0.1"),
    ("2002:c000:8::", "6to4 embedding 192.0.0.8"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("2001:0:5ef5:79fd:0:0:f5ff:fffe", "Teredo embedding public addresses"),
    ("64:ff9b::6440:1", "NAT64 embedding 100.64.0.1"),
    ("64:ff9b::c612:1", "NAT64 embedding 198.18.0.1"),
    ("64:ff9b:1::a00:1", "local-use NAT64, 64:ff9b:1::/48"),
    ("::ffff:192.0.0.8", "IPv4-mapped 192.0.0.8"),
    ("::ffff:198.18.0.1", "IPv4-mapped 198.18.0.1"),
    ("::ffff:224.0.0.1", "IPv4-mapped multicast"),
    ("::10.0.0.1", "deprecated IPv4-compatible"),
    ("::8.8.8.8", "deprecated IPv4-compatible, even of a public address"),
    ("100::1", "discard-only, 100::/64"),
    ("5f00::1", "SRv6 SIDs, 5f00::/16"),
]


@pytest.mark.parametrize(("address", "kind"), SPECIAL_PURPOSE)
def test_special_purpose_addresses_are_never_public(address: str, kind: str) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is False, kind


@pytest.mark.parametrize(("address", "kind"), SPECIAL_PURPOSE)
def test_a_name_resolving_to_a_special_purpose_address_is_refused(address: str, kind: str) -> None:
    with pytest.raises(InvalidToolCallError, match="Only public addresses may be fetched"):
        check_url("http://special.example/", None, lambda host: [address])


@pytest.mark.parametrize("answer", ["not-an-address", "", "300.1.1.1", "\ud800", "%eth0"])
def test_a_resolver_answer_that_is_not_an_address_is_an_execution_error(answer: str) -> None:
    with pytest.raises(ToolExecutionError) as caught:
        check_url("http://odd.example/", None, lambda host: [answer])
    assert str(caught.value).startswith("The host 'odd.example' could not be resolved: ")
    str(caught.value).encode("utf-8")


def test_a_name_the_resolver_refuses_outright_is_an_execution_error() -> None:
    def broken(host: str) -> Sequence[str]:
        raise ValueError("embedded null character")  # what getaddrinfo says of "a\x00b"

    with pytest.raises(ToolExecutionError, match="could not be resolved: embedded null"):
        check_url("http://odd.example/", None, broken)


@pytest.mark.parametrize(
    "pattern",
    ["api.example.com", "*.example.com", "*.test", "127.0.0.1", "::1", "[::1]", "x_y.io."],
)
def test_host_names_patterns_and_addresses_are_valid_entries(pattern: str) -> None:
    assert host_pattern_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("*", "would allow every host"),
        ("*.*", "would allow every host"),
        ("https://api.example.com", "is a URL, not a host name"),
        ("api.*.com", "has a * that does not start a *. pattern"),
        ("*example.com", "has a * that does not start a *. pattern"),
        ("example.com/api", "has a path"),
        ("example.com:8080", "has a port (every port of an allowed host may be fetched)"),
        ("[::1]:8080", "has a port (every port of an allowed host may be fetched)"),
        ("bücher.de", "is not ASCII (write an international name in its xn-- form)"),
        ("a..b", "is not a host name (letters, digits, '-' and '_' between dots)"),
        ("api example.com", "is not a host name (letters, digits, '-' and '_' between dots)"),
    ],
)
def test_an_entry_that_can_never_match_or_matches_everything_is_named(
    pattern: str, problem: str
) -> None:
    assert host_pattern_problem(pattern) == problem


@pytest.mark.parametrize("host", ["api.example.com", "example.com", "localhost"])
def test_a_lone_star_would_match_no_host_so_it_is_refused_up_front(host: str) -> None:
    assert host_matches(host, ["*"]) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://admin:secret@public.example/",
        "ftp://admin:secret@public.example/",
        "http://admin:secret@",
    ],
)
def test_a_refused_url_never_repeats_its_password(url: str) -> None:
    with pytest.raises(InvalidToolCallError) as refused:
        check_url(url, None, lambda host: FAKE_DNS[host])
    assert "secret" not in str(refused.value)
    assert "***@" in str(refused.value)
