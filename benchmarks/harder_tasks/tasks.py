"""The harder tasks: questions about the service desk, each with what a right answer does.

Every expected value comes from a query on the data (or, for arithmetic, from the numbers
in the question), so the tasks stay true when the data changes; `Task.problems` says when
the data no longer supports a task.
"""

from __future__ import annotations

from .checks import Computed, Money, Names, NoEmail, NoNames, NotFound, Numbers, Query, Task
from .desk_data import FileValue

_CLOSED_BY_AGENT = (
    "WITH closed AS (SELECT a.name, COUNT(*) AS n FROM tickets t "
    "JOIN agents a ON a.id = t.agent_id WHERE t.status = 'closed' GROUP BY a.id) "
)
_OPEN_BY_CATEGORY = (
    "WITH open AS (SELECT category, COUNT(*) AS n FROM tickets "
    "WHERE status = 'open' GROUP BY category) "
)
_ON_CALL = FileValue("docs/oncall.md", r"## Now on call\n([A-Z]\w+ [A-Z]\w+)")
_VPN_DEPARTMENT = FileValue("docs/escalation.md", r"\| VPN \| ([A-Z]+) \|")
_FREEZE_START = FileValue("docs/freeze.md", r"starts on (\d{4}-\d{2}-\d{2})")
_FREEZE_END = FileValue("docs/freeze.md", r"ends on (\d{4}-\d{2}-\d{2})")

TASKS: tuple[Task, ...] = (
    # Joins: the self-join on agents.manager_id, a three-table chain, departments.manager_id.
    Task(
        "agent_manager",
        "join",
        "Who is Amara Okafor's manager?",
        (
            Names(
                Query(
                    "SELECT m.name FROM agents a JOIN agents m ON m.id = a.manager_id "
                    "WHERE a.name = 'Amara Okafor'"
                ),
                single=True,
            ),
        ),
    ),
    Task(
        "ticket_department",
        "join",
        "Which department handles ticket HD-1009, going by the agent it is assigned to?",
        (
            Names(
                Query(
                    "SELECT d.name FROM tickets t JOIN agents a ON a.id = t.agent_id "
                    "JOIN departments d ON d.id = a.department_id WHERE t.code = 'HD-1009'"
                ),
                single=True,
            ),
        ),
    ),
    Task(
        "department_manager",
        "join",
        "Who is the manager of the Business Applications department?",
        (
            Names(
                Query(
                    "SELECT a.name FROM departments d JOIN agents a ON a.id = d.manager_id "
                    "WHERE d.name = 'Business Applications'"
                ),
                single=True,
            ),
            NoNames(
                Query(
                    "SELECT a.name FROM agents a JOIN departments d ON d.id = a.department_id "
                    "WHERE d.name = 'Business Applications' AND a.id <> d.manager_id"
                )
            ),
        ),
    ),
    # Grouping and aggregates.
    Task(
        "most_closed",
        "grouping",
        "Which agent has closed the most tickets, and how many?",
        (
            Names(
                Query(
                    _CLOSED_BY_AGENT + "SELECT name FROM closed "
                    "WHERE n = (SELECT MAX(n) FROM closed)"
                ),
                single=True,
            ),
            Numbers(Query(_CLOSED_BY_AGENT + "SELECT MAX(n) FROM closed")),
        ),
    ),
    Task(
        "tickets_per_priority",
        "grouping",
        "How many tickets are there of each priority?",
        (Numbers(Query("SELECT COUNT(*) FROM tickets GROUP BY priority ORDER BY priority")),),
    ),
    Task(
        "average_p1_hours",
        "grouping",
        "On average, how many hours were spent on a closed P1 ticket?",
        (
            Numbers(
                Query("SELECT AVG(hours) FROM tickets WHERE priority = 'P1' AND status = 'closed'"),
                tolerance=0.05,
            ),
        ),
    ),
    Task(
        "top_open_category",
        "grouping",
        "Which category has the most open tickets?",
        (
            Names(
                Query(
                    _OPEN_BY_CATEGORY + "SELECT category FROM open "
                    "WHERE n = (SELECT MAX(n) FROM open)"
                ),
                single=True,
            ),
        ),
    ),
    # Dates stored as text, 'YYYY-MM-DD'.
    Task(
        "opened_in_march",
        "text_dates",
        "How many tickets were opened in March 2026?",
        (
            Numbers(
                Query(
                    "SELECT COUNT(*) FROM tickets "
                    "WHERE opened BETWEEN '2026-03-01' AND '2026-03-31'"
                )
            ),
        ),
    ),
    Task(
        "closed_in_april",
        "text_dates",
        "How many tickets were closed in April 2026?",
        (
            Numbers(
                Query(
                    "SELECT COUNT(*) FROM tickets "
                    "WHERE resolved BETWEEN '2026-04-01' AND '2026-04-30'"
                )
            ),
        ),
    ),
    Task(
        "newest_agent",
        "text_dates",
        "Which agent was hired most recently?",
        (
            Names(
                Query("SELECT name FROM agents WHERE hired = (SELECT MAX(hired) FROM agents)"),
                single=True,
            ),
        ),
    ),
    # Absent entities: the right answer says so and invents nothing.
    Task(
        "absent_agent_rate",
        "absent",
        "What is Marta Kowalski's hourly rate?",
        (NotFound(Query("SELECT name FROM agents WHERE name LIKE '%Kowalski%'")),),
    ),
    Task(
        "absent_agent_department",
        "absent",
        "Which department does Oliver Grant work in?",
        (
            NotFound(Query("SELECT name FROM agents WHERE name LIKE '%Grant%'")),
            NoNames(Query("SELECT name FROM departments")),
        ),
    ),
    Task(
        "absent_ticket",
        "absent",
        "What is the status of ticket HD-2042?",
        (
            NotFound(Query("SELECT code FROM tickets WHERE code = 'HD-2042'")),
            NoNames(Query("SELECT DISTINCT status FROM tickets")),
        ),
    ),
    # Arithmetic the model can do without a tool.
    Task(
        "percent_of_hours",
        "arithmetic",
        "What is 15% of 240 hours?",
        (Numbers(Computed((240 * 0.15,))),),
    ),
    Task(
        "share_tickets",
        "arithmetic",
        "If 18 tickets are shared equally among 4 agents, how many tickets does each agent "
        "get, and how many are left over?",
        (Numbers(Computed((18 // 4, 18 % 4))),),
    ),
    Task(
        "hours_times_rate",
        "arithmetic",
        "A ticket took 3.5 hours at 120 CHF per hour. What did it cost?",
        (Numbers(Computed((3.5 * 120,))),),
    ),
    # A file gives the value a query needs.
    Task(
        "on_call_open_tickets",
        "file_sql",
        "Read docs/oncall.md to find who is on call now, then tell me how many open tickets "
        "are assigned to that person.",
        (
            Numbers(
                Query(
                    "SELECT COUNT(*) FROM tickets t JOIN agents a ON a.id = t.agent_id "
                    "WHERE t.status = 'open' AND a.name = ?",
                    (_ON_CALL,),
                )
            ),
        ),
    ),
    Task(
        "vpn_escalation_agents",
        "file_sql",
        "According to docs/escalation.md, which department takes VPN escalations? "
        "List the agents of that department.",
        (
            Names(
                Query(
                    "SELECT a.name FROM agents a JOIN departments d ON d.id = a.department_id "
                    "WHERE d.code = ?",
                    (_VPN_DEPARTMENT,),
                )
            ),
            NoNames(
                Query(
                    "SELECT a.name FROM agents a JOIN departments d ON d.id = a.department_id "
                    "WHERE d.code <> ?",
                    (_VPN_DEPARTMENT,),
                )
            ),
        ),
    ),
    Task(
        "opened_during_freeze",
        "file_sql",
        "How many tickets were opened during the change freeze described in docs/freeze.md?",
        (
            Numbers(
                Query(
                    "SELECT COUNT(*) FROM tickets WHERE opened BETWEEN ? AND ?",
                    (_FREEZE_START, _FREEZE_END),
                )
            ),
        ),
    ),
    # Answers that are lists: all of the right items, none of the wrong ones.
    Task(
        "reports_of_manager",
        "list",
        "List the agents who report to Priya Nair.",
        (
            Names(
                Query(
                    "SELECT a.name FROM agents a JOIN agents m ON m.id = a.manager_id "
                    "WHERE m.name = 'Priya Nair'"
                )
            ),
            NoNames(
                Query(
                    "SELECT a.name FROM agents a LEFT JOIN agents m ON m.id = a.manager_id "
                    "WHERE a.name <> 'Priya Nair' AND (m.name IS NULL OR m.name <> 'Priya Nair')"
                )
            ),
        ),
    ),
    Task(
        "open_p1_codes",
        "list",
        "Which P1 tickets are still open? Give their codes.",
        (
            Names(Query("SELECT code FROM tickets WHERE priority = 'P1' AND status = 'open'")),
            NoNames(Query("SELECT code FROM tickets WHERE priority = 'P1' AND status <> 'open'")),
        ),
    ),
    Task(
        "agents_without_tickets",
        "list",
        "Which agents have no tickets assigned to them?",
        (
            Names(
                Query(
                    "SELECT name FROM agents WHERE id NOT IN "
                    "(SELECT agent_id FROM tickets WHERE agent_id IS NOT NULL)"
                )
            ),
            NoNames(
                Query("SELECT DISTINCT a.name FROM agents a JOIN tickets t ON t.agent_id = a.id")
            ),
        ),
    ),
    # Rules to obey: amounts with two decimals and CHF (project 1), no e-mail addresses.
    Task(
        "hourly_rate_in_chf",
        "rule",
        "What is Yuki Tanaka's hourly rate?",
        (Money(Query("SELECT hourly_rate FROM agents WHERE name = 'Yuki Tanaka'"), single=True),),
        project_id=1,
    ),
    Task(
        "ticket_cost_in_chf",
        "rule",
        "What did ticket HD-1063 cost, at the hourly rate of the agent assigned to it?",
        (
            Money(
                Query(
                    "SELECT t.hours * a.hourly_rate FROM tickets t "
                    "JOIN agents a ON a.id = t.agent_id WHERE t.code = 'HD-1063'"
                ),
                single=True,
            ),
        ),
        project_id=1,
    ),
    Task(
        "manager_contact_without_email",
        "rule",
        "Who manages the Security department, and what is their e-mail address?",
        (
            Names(
                Query(
                    "SELECT a.name FROM departments d JOIN agents a ON a.id = d.manager_id "
                    "WHERE d.name = 'Security'"
                ),
                single=True,
            ),
            NoEmail(),
        ),
    ),
)
