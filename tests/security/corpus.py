"""The red-team corpus for rule checks: hostile answers and tool calls, with what must happen.

Each answer case hides one match of a ``forbid`` detector in an answer and names the exact
text the redaction must leave; each tool case is a call a rule must deny. The cases are
built from small tables (the plain matches, the characters that hide them) so a new trick
is one line. ``GAPS`` are evasions docs/rules.md says are not covered; they pin that
statement, so covering one is a visible change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

PREFIX = "Here it is: "
SUFFIX = " (as asked)."


@dataclass(frozen=True)
class AnswerCase:
    """An answer hiding a match of ``forbid``; the redaction must leave ``expected``."""

    id: str
    forbid: str
    text: str

    @property
    def expected(self) -> str:
        return f"{PREFIX}[redacted: {self.forbid.split(':')[0]}]{SUFFIX}"


@dataclass(frozen=True)
class ToolCase:
    """A call the ``args`` pattern must deny."""

    id: str
    pattern: str
    arguments: object


PLAIN = {
    "email": "alice.martin@example.com",
    "phone": "+33 6 12 34 56 78",
    "credit_card": "4111 1111 1111 1111",
    "iban": "DE89 3704 0044 0532 0130 00",
    "ipv4": "192.168.10.12",
    "ipv6": "2001:db8::8a2e:370:7334",
    "secret": "AKIAIOSFODNN7EXAMPLE",
}

# Characters a reader does not see. Each is put inside every plain match.
INVISIBLE = {
    "zero_width_space": "\u200b",
    "zero_width_non_joiner": "\u200c",
    "zero_width_joiner": "\u200d",
    "word_joiner": "\u2060",
    "byte_order_mark": "\ufeff",
    "soft_hyphen": "\u00ad",
    "left_to_right_mark": "\u200e",
    "right_to_left_mark": "\u200f",
    "left_to_right_embedding": "\u202a",
    "right_to_left_override": "\u202e",
    "pop_directional_formatting": "\u202c",
    "left_to_right_isolate": "\u2066",
    "first_strong_isolate": "\u2068",
    "pop_directional_isolate": "\u2069",
    "arabic_letter_mark": "\u061c",
    "function_application": "\u2061",
    "invisible_times": "\u2062",
    "invisible_separator": "\u2063",
    "variation_selector_16": "\ufe0f",
    "variation_selector_256": "\U000e01ef",
    "tag_space": "\U000e0020",
    "combining_grapheme_joiner": "\u034f",
    "mongolian_vowel_separator": "\u180e",
    "hangul_filler": "\u3164",
    "null": "\x00",
    "escape": "\x1b",
    "c1_control": "\x9b",
}


def _inside(match: str, hidden: str) -> list[tuple[str, str]]:
    """``match`` with ``hidden`` after its first character, in its middle, before its last."""
    middle = len(match) // 2
    return [
        ("after_first", match[:1] + hidden + match[1:]),
        ("middle", match[:middle] + hidden + match[middle:]),
        ("before_last", match[:-1] + hidden + match[-1:]),
    ]


def _invisible_cases() -> list[AnswerCase]:
    cases = []
    for forbid, match in PLAIN.items():
        for name, hidden in INVISIBLE.items():
            for where, text in _inside(match, hidden):
                if where != "middle" and name not in ("zero_width_space", "byte_order_mark"):
                    continue
                cases.append(AnswerCase(f"{forbid}-{name}-{where}", forbid, text))
        every_gap = "\u200b".join(match)
        cases.append(AnswerCase(f"{forbid}-zero_width_between_every_character", forbid, every_gap))
        mixed = "".join(c + "\u2060\u00ad\u200e"[i % 3] for i, c in enumerate(match))[:-1]
        cases.append(AnswerCase(f"{forbid}-mixed_invisibles_everywhere", forbid, mixed))
    return cases


SPACES = {
    "no_break_space": "\u00a0",
    "narrow_no_break_space": "\u202f",
    "thin_space": "\u2009",
    "hair_space": "\u200a",
    "figure_space": "\u2007",
    "punctuation_space": "\u2008",
    "en_space": "\u2002",
    "em_space": "\u2003",
    "six_per_em_space": "\u2006",
    "medium_mathematical_space": "\u205f",
    "ideographic_space": "\u3000",
    "ogham_space_mark": "\u1680",
}


def _space_cases() -> list[AnswerCase]:
    return [
        AnswerCase(f"{forbid}-grouped_with_{name}", forbid, PLAIN[forbid].replace(" ", space))
        for forbid in ("phone", "credit_card", "iban")
        for name, space in SPACES.items()
    ]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _digits(text: str, zero: int) -> str:
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)


CYRILLIC_A, CYRILLIC_E, CYRILLIC_I, CYRILLIC_KA = "\u0410", "\u0415", "\u0406", "\u041a"
CYRILLIC_SMALL_A, CYRILLIC_SMALL_E = "\u0430", "\u0435"

LOOK_ALIKES = [
    AnswerCase("email-fullwidth_at", "email", "alice.martin\uff20example.com"),
    AnswerCase("email-small_commercial_at", "email", "alice.martin\ufe6bexample.com"),
    AnswerCase("email-fullwidth_full_stops", "email", "alice\uff0emartin@example\uff0ecom"),
    AnswerCase("email-ideographic_full_stop", "email", "alice.martin@example\u3002com"),
    AnswerCase("email-halfwidth_ideographic_stop", "email", "alice.martin@example\uff61com"),
    AnswerCase("email-one_dot_leader", "email", "alice.martin@example\u2024com"),
    AnswerCase("email-small_full_stop", "email", "alice.martin@example\ufe52com"),
    AnswerCase("email-stenographic_full_stop", "email", "alice.martin@example\u2e3ccom"),
    AnswerCase("email-all_fullwidth", "email", _fullwidth(PLAIN["email"])),
    AnswerCase(
        "email-mathematical_bold",
        "email",
        "".join(chr(0x1D41A + ord(c) - ord("a")) if c.isalpha() else c for c in "alice")
        + "@example.com",
    ),
    AnswerCase(
        "email-cyrillic_letters",
        "email",
        f"{CYRILLIC_SMALL_A}lice.martin@ex{CYRILLIC_SMALL_A}mple.com",
    ),
    AnswerCase("email-fullwidth_at_and_zero_width", "email", "alice\u200b\uff20\u200bexample.com"),
    AnswerCase("phone-fullwidth", "phone", _fullwidth(PLAIN["phone"])),
    AnswerCase("phone-fullwidth_plus", "phone", "\uff0b33 6 12 34 56 78"),
    AnswerCase("phone-arabic_indic_digits", "phone", _digits(PLAIN["phone"], 0x0660)),
    AnswerCase("phone-extended_arabic_indic_digits", "phone", _digits(PLAIN["phone"], 0x06F0)),
    AnswerCase("phone-devanagari_digits", "phone", _digits(PLAIN["phone"], 0x0966)),
    AnswerCase("phone-bengali_digits", "phone", _digits(PLAIN["phone"], 0x09E6)),
    AnswerCase("phone-thai_digits", "phone", _digits(PLAIN["phone"], 0x0E50)),
    AnswerCase("phone-mathematical_digits", "phone", _digits(PLAIN["phone"], 0x1D7CE)),
    AnswerCase("phone-non_breaking_hyphens", "phone", "+1 650\u2011253\u20110000"),
    AnswerCase("phone-figure_dashes", "phone", "+1 650\u2012253\u20120000"),
    AnswerCase("credit_card-fullwidth", "credit_card", _fullwidth(PLAIN["credit_card"])),
    AnswerCase("credit_card-arabic_indic", "credit_card", _digits(PLAIN["credit_card"], 0x0660)),
    AnswerCase("credit_card-devanagari", "credit_card", _digits(PLAIN["credit_card"], 0x0966)),
    AnswerCase("credit_card-monospace", "credit_card", _digits(PLAIN["credit_card"], 0x1D7F6)),
    AnswerCase(
        "credit_card-non_breaking_hyphens", "credit_card", "4111\u20111111\u20111111\u20111111"
    ),
    AnswerCase("credit_card-figure_dashes", "credit_card", "4111\u20121111\u20121111\u20121111"),
    AnswerCase("credit_card-en_dashes", "credit_card", "4111\u20131111\u20131111\u20131111"),
    AnswerCase("credit_card-minus_signs", "credit_card", "4111\u22121111\u22121111\u22121111"),
    AnswerCase(
        "credit_card-fullwidth_hyphens", "credit_card", "4111\uff0d1111\uff0d1111\uff0d1111"
    ),
    AnswerCase("iban-fullwidth", "iban", _fullwidth(PLAIN["iban"])),
    AnswerCase("iban-cyrillic_e_in_country", "iban", f"D{CYRILLIC_E}89 3704 0044 0532 0130 00"),
    AnswerCase("iban-arabic_indic_digits", "iban", _digits(PLAIN["iban"], 0x0660)),
    AnswerCase("ipv4-ideographic_stops", "ipv4", "192\u3002168\u300210\u300212"),
    AnswerCase("ipv4-fullwidth", "ipv4", _fullwidth(PLAIN["ipv4"])),
    AnswerCase("ipv4-one_dot_leaders", "ipv4", "192\u2024168\u202410\u202412"),
    AnswerCase("ipv4-arabic_indic_digits", "ipv4", _digits(PLAIN["ipv4"], 0x0660)),
    AnswerCase("ipv6-fullwidth", "ipv6", _fullwidth(PLAIN["ipv6"])),
    AnswerCase(
        "ipv6-cyrillic_hex_letters",
        "ipv6",
        f"2001:db8::8{CYRILLIC_SMALL_A}2{CYRILLIC_SMALL_E}:370:7334",
    ),
    AnswerCase("secret-fullwidth", "secret", _fullwidth(PLAIN["secret"])),
    AnswerCase(
        "secret-cyrillic_prefix",
        "secret",
        f"{CYRILLIC_A}{CYRILLIC_KA}{CYRILLIC_I}{CYRILLIC_A}IOSFODNN7EXAMPLE",
    ),
    AnswerCase("secret-fullwidth_low_line", "secret", "ghp\uff3f" + "a1B2" * 9),
    AnswerCase("secret-fullwidth_hyphen", "secret", "sk\uff0dproj-" + "Ab1_" * 8),
    AnswerCase(
        "secret-mathematical_monospace",
        "secret",
        "".join(chr(0x1D670 + ord(c) - ord("A")) if "A" <= c <= "Z" else c for c in "AKIA")
        + "IOSFODNN7EXAMPLE",
    ),
    AnswerCase(
        "secret-jwt_with_zero_widths",
        "secret",
        "eyJhbGci\u200bOiJIUzI1NiJ9.eyJzdWIi\u200bOiIxIn0.dozjgNry\u200bP4J3jVmN",
    ),
]

# Numbers next to a match, to make its candidate fail a check digit: the match is found
# wherever it starts in the run, and only the decoys around it stay.
DECOY_CASES = [
    (
        AnswerCase("credit_card-digit_groups_before", "credit_card", "98 76 4111 1111 1111 1111"),
        f"{PREFIX}98 76 [redacted: credit_card]{SUFFIX}",
    ),
    (
        AnswerCase("credit_card-groups_around", "credit_card", "1234 4111 1111 1111 1111 5678"),
        f"{PREFIX}1234 [redacted: credit_card] 5678{SUFFIX}",
    ),
    (
        AnswerCase("credit_card-double_spaces", "credit_card", "4111  1111  1111  1111"),
        f"{PREFIX}[redacted: credit_card]{SUFFIX}",
    ),
    (
        AnswerCase("credit_card-tabs", "credit_card", "4111\t1111\t1111\t1111"),
        f"{PREFIX}[redacted: credit_card]{SUFFIX}",
    ),
    (
        AnswerCase("credit_card-spaced_hyphens", "credit_card", "4111 - 1111 - 1111 - 1111"),
        f"{PREFIX}[redacted: credit_card]{SUFFIX}",
    ),
    (
        AnswerCase("credit_card-hyphen_before", "credit_card", "ref-4111111111111111"),
        f"{PREFIX}ref-[redacted: credit_card]{SUFFIX}",
    ),
    (
        AnswerCase("iban-fake_group_before", "iban", "XX12 DE89 3704 0044 0532 0130 00"),
        f"{PREFIX}XX12 [redacted: iban]{SUFFIX}",
    ),
    (
        AnswerCase("phone-decoys_cut_by_letters", "phone", "1234567 b 7654321 b +33 6 12 34 56 78"),
        f"{PREFIX}1234567 b 7654321 b [redacted: phone]{SUFFIX}",
    ),
]

ANSWER_CASES = _invisible_cases() + _space_cases() + LOOK_ALIKES

# -- tool calls -------------------------------------------------------------------------

EMAIL_COLUMN = r"regex:(?i)\bemail\b"
DELETE = r"regex:(?i)\bdelete\b"
DELETE_FROM = r"regex:(?i)\bdelete\s+from\b"

_SEPARATORS = {
    "newline": "\n",
    "tab": "\t",
    "crlf": "\r\n",
    "carriage_return": "\r",
    "vertical_tab": "\x0b",
    "form_feed": "\x0c",
    "two_spaces": "  ",
    "line_comment": " --x\n",
    "no_break_space": "\u00a0",
    "ideographic_space": "\u3000",
}


def _tool_cases() -> list[ToolCase]:
    cases = []
    for name, separator in _SEPARATORS.items():
        cases.append(
            ToolCase(
                f"email_column-{name}",
                EMAIL_COLUMN,
                {"sql": f"SELECT{separator}email{separator}FROM customers"},
            )
        )
        # A comment between two words defeats any two-word pattern: docs/rules.md advises
        # one keyword, which the next case shows.
        two_words = DELETE if "--" in separator else DELETE_FROM
        cases.append(
            ToolCase(f"delete_from-{name}", two_words, {"sql": f"DELETE{separator}FROM orders"})
        )
    cases += [
        ToolCase("email_column-block_comment", EMAIL_COLUMN, {"sql": "SELECT/**/email FROM c"}),
        ToolCase("email_column-quoted", EMAIL_COLUMN, {"sql": 'SELECT "email" FROM c'}),
        ToolCase("email_column-backticks", EMAIL_COLUMN, {"sql": "SELECT `email` FROM c"}),
        ToolCase("email_column-brackets", EMAIL_COLUMN, {"sql": "SELECT [email] FROM c"}),
        ToolCase("email_column-upper", EMAIL_COLUMN, {"sql": "SELECT EMAIL FROM c"}),
        ToolCase("email_column-mixed_case", EMAIL_COLUMN, {"sql": "SELECT eMaIl FROM c"}),
        ToolCase("email_column-qualified", EMAIL_COLUMN, {"sql": "SELECT c.email FROM c"}),
        ToolCase(
            "email_column-in_a_list",
            EMAIL_COLUMN,
            {"queries": ["SELECT 1", "SELECT\nemail FROM c"]},
        ),
        ToolCase(
            "email_column-nested_dicts",
            EMAIL_COLUMN,
            {"batch": [{"step": {"sql": "SELECT\temail FROM c"}}]},
        ),
        ToolCase("email_column-as_a_key", EMAIL_COLUMN, {"columns": {"email\n": True}}),
        ToolCase("email_column-tuple", EMAIL_COLUMN, {"sql": ("SELECT", "email\nFROM c")}),
        ToolCase(
            "email_column-deep",
            EMAIL_COLUMN,
            {"a": [[[[[[[[[[{"b": "SELECT\nemail FROM c"}]]]]]]]]]]},
        ),
        ToolCase("email_column-zero_width", EMAIL_COLUMN, {"sql": "SELECT em\u200bail FROM c"}),
        ToolCase("email_column-soft_hyphen", EMAIL_COLUMN, {"sql": "SELECT em\u00adail FROM c"}),
        ToolCase(
            "email_column-fullwidth",
            EMAIL_COLUMN,
            {"sql": "SELECT \uff45\uff4d\uff41\uff49\uff4c FROM c"},
        ),
        ToolCase("email_column-cyrillic_a", EMAIL_COLUMN, {"sql": "SELECT em\u0430il FROM c"}),
        ToolCase(
            "email_column-json_escapes",
            EMAIL_COLUMN,
            json.loads('{"sql": "SELECT\\n\\u0065mail FROM customers"}'),
        ),
        ToolCase("delete-lower", DELETE, {"sql": "delete from orders"}),
        ToolCase("delete-block_comment", DELETE, {"sql": "DELETE/**/FROM orders"}),
        ToolCase(
            "delete-in_cte", DELETE, {"sql": "WITH x AS (DELETE FROM o RETURNING *) SELECT 1"}
        ),
        ToolCase("delete-zero_width", DELETE, {"sql": "DEL\u200bETE FROM orders"}),
        ToolCase("delete-word_joiner", DELETE, {"sql": "DELE\u2060TE FROM orders"}),
        ToolCase(
            "delete-fullwidth", DELETE, {"sql": "\uff24\uff25\uff2c\uff25\uff34\uff25 FROM o"}
        ),
        ToolCase("delete-cyrillic_e", DELETE, {"sql": "D\u0415LETE FROM orders"}),
        ToolCase("delete-mathematical_bold", DELETE, {"sql": "\U0001d403ELETE FROM orders"}),
        ToolCase(
            "delete-json_escapes", DELETE, json.loads('{"sql": "\\u0044ELETE\\tFROM orders"}')
        ),
        ToolCase("delete-block_comment_between_words", DELETE, {"sql": "DELETE/*x*/FROM o"}),
        ToolCase("delete-second_statement", DELETE, {"sql": "SELECT 1;\nDELETE FROM orders"}),
        ToolCase("delete-in_a_key_and_value", DELETE, {"delete": {"from": "orders"}}),
    ]
    return cases


TOOL_CASES = _tool_cases()

# Calls that must stay allowed: the robust patterns do not over-match.
ALLOWED_CALLS = [
    ToolCase("email_column-other_column", EMAIL_COLUMN, {"sql": "SELECT name FROM customers"}),
    ToolCase("email_column-longer_word", EMAIL_COLUMN, {"sql": "SELECT emails_sent FROM stats"}),
    ToolCase("delete-longer_word", DELETE, {"sql": "SELECT deleted_at FROM orders"}),
    ToolCase("delete-other_keyword", DELETE, {"sql": "SELECT * FROM orders"}),
]

# -- what is not covered (docs/rules.md) --------------------------------------------------

GAPS = [
    AnswerCase("email-spelled_at_and_dot", "email", "alice [at] example [dot] com"),
    AnswerCase("email-spaced_out", "email", "a l i c e @ e x a m p l e . c o m"),
    AnswerCase("email-html_entity", "email", "alice&#64;example.com"),
    AnswerCase("email-base64", "email", "YWxpY2UubWFydGluQGV4YW1wbGUuY29t"),
    AnswerCase("credit_card-spelled_digits", "credit_card", "four one one one, one one one one"),
    AnswerCase("credit_card-dotted_groups", "credit_card", "4111.1111.1111.1111"),
    AnswerCase("phone-spelled_digits", "phone", "plus three three six twelve thirty-four"),
    AnswerCase("secret-reversed", "secret", "ELPMAXE7NNDOFSOIAIKA"),
]
