"""The dialect hint table: each mistake found in the parsed query, and no hint for valid SQL."""

from __future__ import annotations

import pytest
from sqlglot import parse_one

from langchain_agent_rules.tools._sql_hints import (
    HINTS,
    SILENT_HINTS,
    Hint,
    foreign_syntax_hint,
    query_hints,
)


def hints(sql: str, dialect: str, missing: str | None = None) -> list[Hint]:
    return query_hints(parse_one(sql, read=dialect), dialect, missing)


def test_the_table_covers_both_dialects() -> None:
    assert set(HINTS) == {"sqlite", "postgres"}
    assert set(SILENT_HINTS) == {"sqlite"}


@pytest.mark.parametrize(
    ("dialect", "sql", "missing", "expected"),
    [
        (
            "sqlite",
            "SELECT 240 * 0.15 AS tip FROM dual",
            "dual",
            Hint(
                "SQLite has no dual table; a SELECT of an expression needs no FROM, as in: "
                "SELECT 240 * 0.15 AS tip",
                explains="dual",
            ),
        ),
        (
            "postgres",
            "SELECT 1 FROM DUAL d JOIN t ON true",
            "dual",
            Hint(
                "PostgreSQL has no dual table; a SELECT of an expression needs no FROM, as "
                "in: SELECT 240 * 0.15",
                explains="dual",
            ),
        ),
        (
            "postgres",
            "SELECT GETDATE()",
            None,
            Hint(
                "PostgreSQL has no GETDATE(); use CURRENT_DATE for today's date or now() for "
                "the date and time."
            ),
        ),
        (
            "postgres",
            "SELECT name FROM t WHERE YEAR(hired) = 2024",
            None,
            Hint(
                "PostgreSQL has no YEAR(); write EXTRACT(YEAR FROM hired) (cast text to a date "
                "first: CAST(hired AS DATE))."
            ),
        ),
        (
            "sqlite",
            "SELECT DAY(d) FROM t",
            None,
            Hint(
                "SQLite has no DAY(); strftime('%d', d) gives the day as text, so compare it "
                "with text, as in: strftime('%d', d) = '01'"
            ),
        ),
        (
            "postgres",
            "SELECT first_name + ' ' + last_name FROM people",
            None,
            Hint("PostgreSQL joins text with ||, not +, as in: first_name || ' ' || last_name"),
        ),
        (
            "postgres",
            'SELECT * FROM t WHERE name = "Zoe Park"',
            '"Zoe Park"',
            Hint(
                'PostgreSQL reads "Zoe Park" as a column name; write text in single quotes, '
                "as in: 'Zoe Park'",
                explains="zoe park",
            ),
        ),
    ],
)
def test_each_mistake_gets_its_hint(
    dialect: str, sql: str, missing: str | None, expected: Hint
) -> None:
    assert hints(sql, dialect, missing and missing.strip('"')) == [expected]


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("sqlite", "SELECT date('now'), datetime('now'), CURRENT_DATE, CURRENT_TIMESTAMP"),
        ("sqlite", "SELECT strftime('%Y', hired) = '2024', a || ' ' || b FROM t"),
        ("sqlite", "SELECT name FROM t WHERE name LIKE '%a%' LIMIT 5"),
        ("sqlite", "SELECT 240 * 0.15, price + 1, price + tax FROM t"),
        ("sqlite", 'SELECT "name" FROM t'),
        ("postgres", "SELECT now(), CURRENT_DATE, EXTRACT(YEAR FROM d), date_part('year', d)"),
        ("postgres", "SELECT name FROM t WHERE name ILIKE '%a%' LIMIT 5"),
        ("postgres", 'SELECT "Name" FROM "Orders"'),
        ("postgres", "SELECT CONCAT(a, b) FROM t"),
    ],
)
def test_valid_sql_gets_no_hint(dialect: str, sql: str) -> None:
    assert hints(sql, dialect) == []


def test_dual_gets_no_hint_when_the_database_did_not_miss_it() -> None:
    assert hints("SELECT 1 FROM dual", "sqlite", missing=None) == []


def test_a_quoted_name_that_is_a_real_unknown_column_is_not_called_text() -> None:
    assert hints('SELECT "Name" FROM t', "postgres", missing="other") == []


def test_a_long_rewrite_is_replaced_by_a_short_example() -> None:
    long = " + ".join(["'x'"] * 200)
    (hint,) = hints(f"SELECT {long}", "postgres")
    assert hint.text == (
        "PostgreSQL joins text with ||, not +, as in: first_name || ' ' || last_name"
    )


@pytest.mark.parametrize(
    ("dialect", "sql", "example"),
    [
        ("sqlite", "SELECT TOP 5 * FROM t", "SELECT * FROM t LIMIT 5"),
        (
            "postgres",
            "SELECT TOP 1 name FROM t ORDER BY salary DESC, id",
            "SELECT name FROM t ORDER BY salary DESC, id LIMIT 1",
        ),
    ],
)
def test_top_is_rewritten_with_limit(dialect: str, sql: str, example: str) -> None:
    hint = foreign_syntax_hint(sql, dialect)
    assert hint is not None
    assert hint.text.endswith(f"put LIMIT n at the end, as in: {example}")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",  # parses here: the refusal was about something else
        "DELETE FROM t",
        "SELECT TOP 1 * INTO copy FROM t",  # the rewrite would write: no hint shows it
        "SELECT TOP 1 " + "(" * 3000 + "1" + ")" * 3000,  # too long to parse again
        "SELEC 1",  # T-SQL cannot read it either
        "SELECT TOP 1 " + " + ".join(["x"] * 200) + " FROM t",  # a rewrite too long to show
    ],
)
def test_no_foreign_syntax_hint_where_it_would_not_help(sql: str) -> None:
    assert foreign_syntax_hint(sql, "sqlite") is None
