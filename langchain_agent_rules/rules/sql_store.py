"""`SqlRuleStore`: rules in one SQL table, for several workers sharing PostgreSQL.

The table's primary key is the rule id, so the database itself refuses a duplicate id,
even when two processes create it at the same moment: one insert commits, the other
raises `DuplicateRuleError`. Every write is one transaction. This is the store to use
when many agent workers write rules concurrently; `LangGraphRuleStore` over a
LangGraph `BaseStore` checks for an existing key and then puts, and that pair is not
atomic (``BaseStore`` has no create-if-absent).

It runs on any database SQLAlchemy speaks; PostgreSQL (through psycopg 3, the
``postgres`` extra) and SQLite are tested. The table ``agent_rules`` is created on first
use, and a table made by an older version is brought up to date on first use: it gains
the ``check`` column (JSON, JSONB on PostgreSQL) and, on PostgreSQL, 64-bit ``priority``
and ``project_id``. To keep several rule sets in one database, pass an engine with a
``schema_translate_map`` or a PostgreSQL ``search_path``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    DateTime,
    Engine,
    MetaData,
    RowMapping,
    Select,
    String,
    Table,
    Text,
    create_engine,
    delete,
    insert,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError

from langchain_agent_rules._sql_url import database_url
from langchain_agent_rules.errors import (
    DuplicateRuleError,
    RuleNotFoundError,
    RuleStoreError,
    RuleValidationError,
)
from langchain_agent_rules.rules._async_twins import ThreadedAsyncTwins
from langchain_agent_rules.rules.limits import AgentRuleToolConfig, check_rule_limits, limits_config
from langchain_agent_rules.rules.model import Rule, is_valid_rule_id, shown_id, utc_now

__all__ = ["RULES_TABLE_NAME", "SqlRuleStore", "sqlalchemy_url"]

RULES_TABLE_NAME = "agent_rules"

_T = TypeVar("_T")

_JSON_OBJECT = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
_metadata = MetaData()
_rules = Table(
    RULES_TABLE_NAME,
    _metadata,
    Column("id", String(64), primary_key=True),
    Column("type", String(16), nullable=False),
    Column("target", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("priority", BigInteger, nullable=False),
    Column("project_id", BigInteger, nullable=True, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("metadata", _JSON_OBJECT),
    Column("check", _JSON_OBJECT),
)
_WIDE_COLUMNS = ("priority", "project_id")
_ORDER = (_rules.c.created_at, _rules.c.id)


def sqlalchemy_url(url: str) -> str:
    """Point a plain ``postgresql://`` URL at psycopg 3, the driver the ``postgres`` extra installs.

    SQLAlchemy before 2.1 reads ``postgresql://`` as psycopg2, which the extra does not
    install; other URLs are returned unchanged.
    """
    try:
        parsed = database_url(url)
    except ArgumentError:
        raise RuleStoreError(
            f"invalid database URL {url!r}: give a SQLAlchemy URL such as "
            "'postgresql://user:password@127.0.0.1:5432/db' or 'sqlite:///rules.db'"
        ) from None
    return parsed.render_as_string(hide_password=False)


class SqlRuleStore(ThreadedAsyncTwins):
    """A rule store in one SQL table whose primary key keeps ids unique across processes.

    Rules come back in a stable order: by ``created_at``, then by id.

    Example:
        .. code-block:: python

            rules = SqlRuleStore("postgresql://agent:secret@127.0.0.1:5432/agents")
            rules.create(Rule(id="be_brief", type="guideline", target="output",
                              content="Keep answers under five sentences."))
            rules.get_all_by_project(7)

    ``limits`` (an `AgentRuleToolConfig` or its keys; the defaults when omitted) are
    checked on every write: a rule that alone breaks one raises `RuleValidationError`
    before the database is touched.
    """

    def __init__(
        self,
        engine_or_url: Engine | str,
        *,
        limits: AgentRuleToolConfig | Mapping[str, Any] | None = None,
    ) -> None:
        self._limits = limits_config(limits)
        if isinstance(engine_or_url, Engine):
            self._engine = engine_or_url
        elif isinstance(engine_or_url, str):
            try:
                self._engine = create_engine(sqlalchemy_url(engine_or_url))
            except (ArgumentError, ImportError) as error:
                raise RuleStoreError(
                    f"cannot open rule database {engine_or_url!r}: {error}; PostgreSQL needs "
                    'the postgres extra (pip install "langchain-agent-rules[postgres]")'
                ) from None
        else:
            raise RuleStoreError(
                "SqlRuleStore needs a SQLAlchemy Engine or a database URL, "
                f"got {type(engine_or_url).__name__}"
            )
        self._table_ready = False
        self._table_lock = threading.Lock()

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine holding the rules."""
        return self._engine

    # -- sync: the RuleStore protocol ------------------------------------------------

    def get_all_by_project(self, project_id: int | None) -> list[Rule]:
        """Return the global rules plus, when ``project_id`` is set, that project's rules."""
        scope: list[ColumnElement[bool]] = [_rules.c.project_id.is_(None)]
        if project_id is not None:
            scope.append(_rules.c.project_id == project_id)
        return self._select(select(_rules).where(or_(*scope)).order_by(*_ORDER))

    def get_all(self) -> list[Rule]:
        """Return every rule: the global ones and those of every project."""
        return self._select(select(_rules).order_by(*_ORDER))

    def get(self, rule_id: str) -> Rule:
        """Return the rule with ``rule_id`` or raise `RuleNotFoundError`."""
        _known_shape(rule_id)

        def read() -> Rule:
            with self._reading() as connection:
                row = connection.execute(select(_rules).where(_rules.c.id == rule_id)).mappings()
                return _found(rule_id, row.first())

        return self._run("read a rule", read)

    def create(self, rule: Rule) -> Rule:
        """Store a new rule; raise `DuplicateRuleError` if its id exists (in any process)."""
        check_rule_limits(rule, self._limits)
        now = utc_now()
        stored = rule.with_changes(created_at=rule.created_at or now, updated_at=now)

        def write() -> Rule:
            try:
                with self._engine.begin() as connection:
                    connection.execute(insert(_rules).values(_row_of(stored)))
            except IntegrityError:
                raise DuplicateRuleError(f"a rule with id {rule.id!r} already exists") from None
            return stored

        return self._run("create a rule", write)

    def update(self, rule: Rule) -> Rule:
        """Replace the rule with the same id, keeping ``created_at``."""
        check_rule_limits(rule, self._limits)
        changes = _row_of(rule.with_changes(updated_at=utc_now()))
        del changes["id"], changes["created_at"]
        statement = (
            update(_rules).where(_rules.c.id == rule.id).values(changes).returning(*_rules.c)
        )

        def write() -> Rule:
            with self._engine.begin() as connection:
                return _found(rule.id, connection.execute(statement).mappings().first())

        return self._run("update a rule", write)

    def delete(self, rule_id: str) -> Rule:
        """Remove the rule with ``rule_id`` and return it."""
        _known_shape(rule_id)
        statement = delete(_rules).where(_rules.c.id == rule_id).returning(*_rules.c)

        def write() -> Rule:
            with self._engine.begin() as connection:
                return _found(rule_id, connection.execute(statement).mappings().first())

        return self._run("delete a rule", write)

    # -- helpers ----------------------------------------------------------------------

    def _run(self, action: str, operation: Callable[[], _T]) -> _T:
        """Create the table if needed, run ``operation``; driver errors become `RuleStoreError`."""
        try:
            self._ensure_table()
            return operation()
        except SQLAlchemyError as error:
            raise RuleStoreError(
                f"cannot {action} in {self._engine.url!r}: {type(error).__name__}: "
                f"{_first_line(error)}"
            ) from error
        except RecursionError:
            raise RuleStoreError(
                f"cannot {action} in {self._engine.url!r}: a stored JSON value is nested "
                "too deeply to read"
            ) from None

    def _select(self, query: Select[Any]) -> list[Rule]:
        def read() -> list[Rule]:
            with self._reading() as connection:
                return [_rule_of(row) for row in connection.execute(query).mappings()]

        return self._run("read rules", read)

    def _reading(self) -> Connection:
        # A read is one statement, consistent on its own: autocommit saves the BEGIN and
        # ROLLBACK round trips a pooled connection would otherwise make.
        return self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def _ensure_table(self) -> None:
        if self._table_ready:
            return
        with self._table_lock:
            if self._table_ready:
                return
            connected = False
            try:
                with self._engine.begin() as connection:
                    connected = True
                    _metadata.create_all(connection, checkfirst=True)
            except SQLAlchemyError:
                if not connected:  # no server: do not wait for a second connect timeout
                    raise
                # Another process may have created the table between the check and the CREATE.
                with self._engine.connect() as connection:
                    schema = connection.schema_for_object(_rules)
                    if not inspect(connection).has_table(RULES_TABLE_NAME, schema=schema):
                        raise
            self._migrate()
            self._table_ready = True

    def _migrate(self) -> None:
        """Bring a table made by an older version up to date (the check column, BIGINTs)."""
        statements = self._migration()
        if not statements:
            return
        try:
            with self._engine.begin() as connection:
                for statement in statements:
                    connection.execute(text(statement))
        except SQLAlchemyError:
            # Another process may have migrated the table at the same moment.
            if self._migration():
                raise

    def _migration(self) -> list[str]:
        """The statements that would bring the table up to date; none when it is."""
        with self._engine.connect() as connection:
            schema = connection.schema_for_object(_rules)
            dialect = connection.dialect
            columns = {
                column["name"]: column
                for column in inspect(connection).get_columns(RULES_TABLE_NAME, schema=schema)
            }
        quote = dialect.identifier_preparer.quote
        table = quote(RULES_TABLE_NAME)
        if schema is not None:
            table = f"{dialect.identifier_preparer.quote_schema(schema)}.{table}"
        statements = []
        if "check" not in columns:
            kind = _rules.c.check.type.compile(dialect=dialect)
            statements.append(f"ALTER TABLE {table} ADD COLUMN {quote('check')} {kind}")
        narrow = [
            name for name in _WIDE_COLUMNS if not isinstance(columns[name]["type"], BigInteger)
        ]
        if narrow and dialect.name == "postgresql":
            widen = ", ".join(f"ALTER COLUMN {quote(name)} TYPE BIGINT" for name in narrow)
            statements.append(f"ALTER TABLE {table} {widen}")
        return statements


def _row_of(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "type": rule.type.value,
        "target": rule.target.value,
        "content": rule.content,
        "priority": rule.priority,
        "project_id": rule.project_id,
        "created_at": _utc(rule.created_at),
        "updated_at": _utc(rule.updated_at),
        "metadata": rule.metadata,
        "check": None if rule.check is None else rule.check.to_record(),
    }


def _known_shape(rule_id: object) -> None:
    # No rule has a malformed id; the database never sees one (a lone surrogate breaks drivers).
    if not is_valid_rule_id(rule_id):
        raise RuleNotFoundError(f"no rule with id {shown_id(rule_id)}")


def _utc(value: datetime | None) -> datetime | None:
    # Stored in UTC: SQLite keeps the wall time and drops the offset.
    return None if value is None else value.astimezone(UTC)


def _rule_of(row: RowMapping) -> Rule:
    fields = dict(row)
    for name in ("created_at", "updated_at"):
        fields[name] = _aware(fields[name])
    try:
        return Rule(**fields)
    except RuleValidationError as error:
        raise RuleStoreError(f"row {fields.get('id')!r} is not a valid rule: {error}") from None


def _aware(value: datetime) -> datetime:
    # SQLite has no time zone type: it hands back the naive UTC time that was stored.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _found(rule_id: str, row: RowMapping | None) -> Rule:
    if row is None:
        raise RuleNotFoundError(f"no rule with id {rule_id!r}")
    return _rule_of(row)


def _first_line(error: SQLAlchemyError) -> str:
    original = getattr(error, "orig", None) or error
    return str(original).strip().splitlines()[0] if str(original).strip() else repr(original)
