"""Real-looking replies of small models and what the text-protocol parser must read in them.

Each entry is (reply, expected): ``("call", [(name, args), ...])``, ``("final", answer)`` or
``("error", substring of the problem)``.
"""

from __future__ import annotations

from typing import Any

Expected = tuple[str, Any]

READ = ("read_file", {"path": "notes.txt"})
SQL = ("sql_query", {"query": "SELECT count(*) FROM users WHERE active = 1"})

CORPUS: list[tuple[str, Expected]] = [
    # --- the canonical form and its fence variants
    ('```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('```tool{"tool": "read_file", "args": {"path": "notes.txt"}}```', ("call", [READ])),
    ('```tool {"tool": "read_file", "args": {"path": "notes.txt"}} ```', ("call", [READ])),
    ('```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}', ("call", [READ])),
    ('```TOOL\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('```tool_call\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('```json\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('```json{"tool": "read_file", "args": {"path": "notes.txt"}}```', ("call", [READ])),
    ('```\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    (
        '```tool\n{\n  "tool": "read_file",\n  "args": {\n    "path": "notes.txt"\n  }\n}\n```',
        ("call", [READ]),
    ),
    (
        '  \n```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```\n\n',
        ("call", [READ]),
    ),
    # --- prose around the block
    (
        'I need to read the file first.\n```tool\n{"tool": "read_file", "args": {"path": '
        '"notes.txt"}}\n```',
        ("call", [READ]),
    ),
    (
        'To answer this, I will query the database.\n\n```tool\n{"tool": "sql_query", "args": '
        '{"query": "SELECT count(*) FROM users WHERE active = 1"}}\n```\nLet me know!',
        ("call", [SQL]),
    ),
    (
        '```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```\nFINAL: The file '
        "says hello.",
        ("call", [READ]),
    ),
    (
        'Sure! Here is the tool call:\n```json\n{"tool": "read_file", "args": {"path": '
        '"notes.txt"}}\n```\nI will wait for the result.',
        ("call", [READ]),
    ),
    # --- other key names and shapes
    ('```json\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('{"name": "read_file", "arguments": {"path": "notes.txt"}}', ("call", [READ])),
    ('{"tool": "read_file", "args": {"path": "notes.txt"}}', ("call", [READ])),
    ('Calling now: {"tool": "read_file", "args": {"path": "notes.txt"}}', ("call", [READ])),
    ('```json\n{"name": "read_file", "parameters": {"path": "notes.txt"}}\n```', ("call", [READ])),
    (
        '```json\n{"name": "read_file", "arguments": "{\\"path\\": \\"notes.txt\\"}"}\n```',
        ("call", [READ]),
    ),
    (
        '```json\n{"function": {"name": "read_file", "arguments": {"path": "notes.txt"}}}\n```',
        ("call", [READ]),
    ),
    ('```tool\n{"tool": "read_file", "path": "notes.txt"}\n```', ("call", [READ])),
    ('```tool\n{"tool_name": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('```tool\n{"tool": "list_tables"}\n```', ("call", [("list_tables", {})])),
    ('```tool\n{"tool": "list_tables", "args": {}}\n```', ("call", [("list_tables", {})])),
    ('```tool\n{"tool": "list_tables", "args": null}\n```', ("call", [("list_tables", {})])),
    ('```tool\n{"tool": " read_file ", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    # --- <tool_call> tags (Qwen's own format)
    (
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>',
        ("call", [READ]),
    ),
    ('<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}', ("call", [READ])),
    (
        'Let me check.\n<tool_call>\n```json\n{"name": "read_file", "arguments": {"path": '
        '"notes.txt"}}\n```\n</tool_call>',
        ("call", [READ]),
    ),
    (
        '<TOOL_CALL>{"name": "read_file", "arguments": {"path": "notes.txt"}}</TOOL_CALL>',
        ("call", [READ]),
    ),
    # --- sloppy JSON that is still clear
    ('```tool\n{"tool": "read_file", "args": {"path": "notes.txt",},}\n```', ("call", [READ])),
    ('```tool\n{"tool": "read_file", "args": {"path": "notes.txt"},}\n```', ("call", [READ])),
    ("```tool\n{'tool': 'read_file', 'args': {'path': 'notes.txt'}}\n```", ("call", [READ])),
    (
        "```tool\n{'tool': 'search', 'args': {'exact': true, 'limit': null}}\n```",
        ("call", [("search", {"exact": True, "limit": None})]),
    ),
    ('```tool\n"tool": "read_file", "args": {"path": "notes.txt"}}\n```', ("call", [READ])),
    ('```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}\n```', ("call", [READ])),
    ('```tool\n{"tool": "read_file", "args": {"path": "notes.txt"\n```', ("call", [READ])),
    # --- nested JSON in the arguments
    (
        '```tool\n{"tool": "http_get", "args": {"url": "http://127.0.0.1/api", "headers": '
        '{"Accept": "application/json"}, "params": {"ids": [1, 2, {"x": "}"}]}}}\n```',
        (
            "call",
            [
                (
                    "http_get",
                    {
                        "url": "http://127.0.0.1/api",
                        "headers": {"Accept": "application/json"},
                        "params": {"ids": [1, 2, {"x": "}"}]},
                    },
                )
            ],
        ),
    ),
    (
        '```tool\n{"tool": "sql_query", "args": {"query": "SELECT name FROM users WHERE '
        'note = \'{\\"a\\": 1}\'"}}\n```',
        ("call", [("sql_query", {"query": "SELECT name FROM users WHERE note = '{\"a\": 1}'"})]),
    ),
    (
        '```tool\n{"tool": "write_note", "args": {"text": "line one\\nline two"}}\n```',
        ("call", [("write_note", {"text": "line one\nline two"})]),
    ),
    (
        '```tool\n{"tool": "translate", "args": {"text": "Zażółć gęślą jaźń"}}\n```',
        ("call", [("translate", {"text": "Zażółć gęślą jaźń"})]),
    ),
    # --- two blocks: both calls, in order; an identical repeat counts once
    (
        '```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```\n```tool\n'
        '{"tool": "list_tables", "args": {}}\n```',
        ("call", [READ, ("list_tables", {})]),
    ),
    (
        '```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```\nand again\n'
        '```tool\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```',
        ("call", [READ]),
    ),
    (
        'First:\n```json\n{"tool": "read_file", "args": {"path": "notes.txt"}}\n```\nThen:\n'
        '```tool\n{"tool": "sql_query", "args": {"query": "SELECT count(*) FROM users WHERE '
        'active = 1"}}\n```',
        ("call", [READ, SQL]),
    ),
    # --- final answers and FINAL: variants
    ("FINAL: 42", ("final", "42")),
    ("FINAL:42", ("final", "42")),
    ("Final: There are 3 active users.", ("final", "There are 3 active users.")),
    ("final answer: 3", ("final", "3")),
    ("Final Answer: There are 3 active users.", ("final", "There are 3 active users.")),
    ("**FINAL:** 3 active users", ("final", "3 active users")),
    ("**Final Answer:** 3", ("final", "3")),
    ("The result shows 3 rows.\nFINAL: 3 active users.", ("final", "3 active users.")),
    ("FINAL:\nThe file says:\nhello\nworld", ("final", "The file says:\nhello\nworld")),
    ("There are 3 active users.", ("final", "There are 3 active users.")),
    ("  Paris is the capital of France.  \n", ("final", "Paris is the capital of France.")),
    ("", ("final", "")),
    # --- prose that mentions tools or shows JSON data is still an answer
    (
        "I could use the read_file tool, but I already know: the answer is 4.",
        ("final", "I could use the read_file tool, but I already know: the answer is 4."),
    ),
    (
        "You can call `sql_query` with a SELECT to count users yourself.",
        ("final", "You can call `sql_query` with a SELECT to count users yourself."),
    ),
    (
        'The user record is:\n```json\n{"name": "Alice", "active": true}\n```',
        ("final", 'The user record is:\n```json\n{"name": "Alice", "active": true}\n```'),
    ),
    (
        "Here is the code:\n```python\nprint('tool')\n```",
        ("final", "Here is the code:\n```python\nprint('tool')\n```"),
    ),
    (
        'FINAL: The config is {"debug": false}.',
        ("final", 'The config is {"debug": false}.'),
    ),
    (
        "The tool returned an error, so I cannot tell.",
        ("final", "The tool returned an error, so I cannot tell."),
    ),
    # --- attempts that cannot be read: an error, never an answer
    ("```tool\nread_file(path='notes.txt')\n```", ("error", "is not valid JSON")),
    ("```tool\n\n```", ("error", "the block is empty")),
    ('```tool\n{"args": {"path": "notes.txt"}}\n```', ("error", 'has no "tool" name')),
    ('```tool\n{"tool": 7, "args": {}}\n```', ("error", 'has no "tool" name')),
    (
        '```tool\n{"tool": "read_file", "args": ["notes.txt"]}\n```',
        ("error", '"args" must be a JSON object, not a list'),
    ),
    ('```tool\n{"tool": "read_file", "args": "notes.txt"}\n```', ("error", "is not valid JSON")),
    ('```tool\n["read_file", "notes.txt"]\n```', ("error", "not a list")),
    (
        '```json\n{"tool": "read_file", "args": {"path": notes.txt}}\n```',
        ("error", "is not valid JSON"),
    ),
    ("<tool_call>read_file notes.txt</tool_call>", ("error", "is not valid JSON")),
    ('{"tool": "read_file", "args": {"path": "notes.txt" "x": 1}}', ("error", "is not valid JSON")),
    ('```json\n{"name": "read_file"}\n```', ("final", '```json\n{"name": "read_file"}\n```')),
]
