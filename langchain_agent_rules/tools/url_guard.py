"""The one URL guard: which URLs ``http_get`` may fetch, and at which address.

Everything here is a pure function except the default resolver, so the whole policy
is testable without touching the network: pass a fake ``resolver`` (host name -> list
of IP addresses). :func:`check_url` returns the address that was checked, and the
tool connects to exactly that address, so a name that resolves differently a moment
later (DNS rebinding) cannot redirect the request.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from langchain_agent_rules.errors import InvalidToolCallError, ToolExecutionError
from langchain_agent_rules.tools._failures import failure_detail

__all__ = [
    "NOT_FETCHABLE",
    "CheckedURL",
    "IPAddress",
    "Resolver",
    "check_url",
    "host_matches",
    "host_pattern_problem",
    "is_public_address",
    "parse_ip_literal",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], Sequence[str]]
"""Resolves a host name to its IP addresses (as text); raises ``OSError`` when it cannot."""

ALLOWED_URLS = "Allowed: http:// or https:// URLs of public hosts, without user:password@."
BAD_URL = "The URL {url!r} is refused: {reason}. " + ALLOWED_URLS
HOST_NOT_ALLOWED = "The host {host!r} is not allowed. Allowed hosts: {allowed}."
PRIVATE_ADDRESS = (
    "The host {host!r} is refused: it resolves to {address}, a private, loopback, "
    "link-local, multicast, reserved or other special-purpose address. Only public "
    "addresses may be fetched."
)
UNRESOLVABLE = "The host {host!r} could not be resolved: {detail}."
HOST_PATTERN_FORMS = (
    "give host names such as api.example.com, *.example.com for every subdomain of "
    "example.com, or IP addresses"
)
"""What an allowed-hosts entry may be, for the messages that refuse one."""

_HOST_LABEL = re.compile(r"[A-Za-z0-9_-]+")
_USERINFO = re.compile(r"(//)[^/?#@]*@")
_NUMBER_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
# IPv6 ranges that embed an IPv4 address which is where the packets really go.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

NOT_FETCHABLE: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = (
    ipaddress.IPv4Network("100.64.0.0/10"),  # shared address space (CGNAT), RFC 6598
    ipaddress.IPv4Network("192.0.0.0/24"),  # IETF protocol assignments, RFC 6890
    ipaddress.IPv4Network("192.88.99.0/24"),  # deprecated 6to4 relay anycast, RFC 7526
    ipaddress.IPv4Network("198.18.0.0/15"),  # benchmarking, RFC 2544
    ipaddress.IPv6Network("fec0::/10"),  # deprecated site-local, RFC 3879
    ipaddress.IPv6Network("3fff::/20"),  # documentation, RFC 9637
)
"""Ranges refused although ``ipaddress`` calls them global on some Python versions.

Python's classification changed between releases (3.11.10, 3.12.4 and 3.13 fixed
several ranges) and knows nothing of ranges assigned after it shipped; together with
multicast and reserved addresses, which ``is_global`` admits, these are refused too.
"""


@dataclass(frozen=True)
class CheckedURL:
    """A URL that passed the guard, with the address to connect to."""

    url: httpx.URL
    host: str
    address: IPAddress


def _parse_number(label: str) -> int:
    if label[:2].lower() == "0x":
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8)
    return int(label)


def parse_ip_literal(host: str) -> IPAddress | None:
    """Return the address a host written as a number stands for, or ``None`` for a name.

    Accepts every spelling that C's ``inet_aton`` (and so most HTTP clients) accepts:
    ``127.0.0.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``, and IPv6
    with or without brackets.
    """
    text = host.strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    labels = text.split(".")
    if not 1 <= len(labels) <= 4 or not all(_NUMBER_LABEL.match(part) for part in labels):
        return None
    try:
        numbers = [_parse_number(part) for part in labels]
    except ValueError:  # an 8 or 9 in an octal label: not a number, so a (bad) name
        return None
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (4 - len(leading)):
        return None
    value = last
    for position, number in enumerate(leading):
        value += number << (8 * (3 - position))
    return ipaddress.IPv4Address(value)


def _translated_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address that packets to an IPv4-mapped or NAT64 address really reach."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public_address(address: IPAddress) -> bool:
    """Return whether ``address`` is a public unicast address that may be fetched.

    Public means ``ipaddress``'s own ``is_global`` and neither multicast, reserved nor in
    `NOT_FETCHABLE`: loopback, private, shared (CGNAT), link-local (including the cloud
    metadata address ``169.254.169.254``), benchmarking, documentation and unspecified
    addresses are refused, in IPv4 and IPv6. An IPv6 address that carries an IPv4 one is
    judged by it: IPv4-mapped and NAT64 (``64:ff9b::/96``) addresses stand for it, and a
    6to4 address (``2002::/16``) is refused when the IPv4 address it embeds is. Teredo
    (``2001::/32``), local-use NAT64 (``64:ff9b:1::/48``) and IPv4-compatible (``::/96``)
    addresses are refused as a whole.
    """
    if isinstance(address, ipaddress.IPv6Address):
        translated = _translated_ipv4(address)
        if translated is not None:
            return is_public_address(translated)
        if address.teredo is not None:
            return False
        if address.sixtofour is not None and not is_public_address(address.sixtofour):
            return False
    return (
        address.is_global
        and not address.is_multicast
        and not address.is_reserved
        and not any(address in network for network in NOT_FETCHABLE)
    )


def host_matches(host: str, allowed_hosts: Sequence[str]) -> str | None:
    """Return the ``allowed_hosts`` entry that admits ``host``, or ``None``.

    Entries are exact names (``api.example.com``, ``127.0.0.1``) or ``*.example.com``,
    which admits every subdomain of ``example.com`` but not ``example.com`` itself.
    Names compare case-insensitively, without a trailing dot.
    """
    name = host.lower().rstrip(".")
    for entry in allowed_hosts:
        pattern = entry.lower().rstrip(".")
        if pattern.startswith("*."):
            if name.endswith(pattern[1:]) and len(name) > len(pattern) - 1:
                return entry
        elif name == pattern.strip("[]"):
            return entry
    return None


def host_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` can never admit a host or would admit every one; ``None`` when fine.

    `host_matches` compares a URL's host name with each entry, so an entry that carries
    a scheme, a port or a path, or a ``*`` anywhere but in a leading ``*.``, never
    matches; ``*`` alone would stand for every host. The reason completes a sentence
    that starts with the entry (``'*' would allow every host``).
    """
    if parse_ip_literal(pattern) is not None:
        return None
    name = pattern.removeprefix("*.").rstrip(".")
    if pattern.strip() in ("*", "*.", "**", "*.*"):
        return "would allow every host"
    if "://" in pattern:
        return "is a URL, not a host name"
    if "*" in name:
        return "has a * that does not start a *. pattern"
    if "/" in name:
        return "has a path"
    if ":" in name:
        return "has a port (every port of an allowed host may be fetched)"
    if not name.isascii():
        return "is not ASCII (write an international name in its xn-- form)"
    if not all(_HOST_LABEL.fullmatch(label) for label in name.split(".")):
        return "is not a host name (letters, digits, '-' and '_' between dots)"
    return None


def system_resolver(host: str) -> list[str]:
    """Resolve ``host`` with the operating system's resolver (``getaddrinfo``)."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _refused(url: str, reason: str) -> InvalidToolCallError:
    # The URL as a refusal shows it: a password never reaches the model or the trace.
    return InvalidToolCallError(BAD_URL.format(url=_USERINFO.sub(r"\1***@", url), reason=reason))


def _parse(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as error:
        raise _refused(url, str(error)) from None
    if parsed.scheme not in ("http", "https"):
        reason = f"the scheme {parsed.scheme!r} is not http or https"
        raise _refused(url, reason)
    if parsed.userinfo:
        raise _refused(url, "it contains user info")
    if not parsed.host:
        raise _refused(url, "it has no host")
    return parsed


def _resolve(host: str, resolver: Resolver) -> list[IPAddress]:
    try:
        # ValueError: getaddrinfo refuses some names outright (an embedded NUL, bad IDNA).
        resolved = list(resolver(host))
        addresses = [ipaddress.ip_address(str(text).split("%", 1)[0]) for text in resolved]
    except (OSError, ValueError) as error:
        detail = failure_detail(error)
        raise ToolExecutionError(UNRESOLVABLE.format(host=host, detail=detail)) from None
    if not addresses:
        raise ToolExecutionError(UNRESOLVABLE.format(host=host, detail="no addresses"))
    return addresses


def check_url(
    url: str, allowed_hosts: Sequence[str] | None, resolver: Resolver = system_resolver
) -> CheckedURL:
    """Check ``url`` against the policy and return it with the address to connect to.

    Args:
        url: the URL from the model (or from a redirect).
        allowed_hosts: when not ``None``, only these hosts (see :func:`host_matches`).
            A host named exactly in the list may resolve to a private address; a host
            admitted by a ``*.`` pattern may not.
        resolver: host name -> IP addresses; not called for numeric hosts.

    Raises:
        InvalidToolCallError: the URL, its host or one of its addresses is not allowed.
        ToolExecutionError: the host name could not be resolved.
    """
    parsed = _parse(url)
    host = parsed.host.lower().rstrip(".")
    entry = host_matches(host, allowed_hosts) if allowed_hosts is not None else None
    if allowed_hosts is not None and entry is None:
        allowed = ", ".join(allowed_hosts) if allowed_hosts else "none"
        raise InvalidToolCallError(HOST_NOT_ALLOWED.format(host=host, allowed=allowed))
    literal = parse_ip_literal(host)
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    else:
        addresses = _resolve(host, resolver)
    may_be_private = entry is not None and not entry.startswith("*.")
    if not may_be_private:
        for address in addresses:
            if not is_public_address(address):
                raise InvalidToolCallError(PRIVATE_ADDRESS.format(host=host, address=address))
    return CheckedURL(url=parsed, host=host, address=addresses[0])
