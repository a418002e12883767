"""A harder task set for the agent: an IT service desk (departments, agents, tickets).

``data/`` holds the database as a schema and CSV files, ``desk/`` the folder ``file_read``
may read, ``rules.json`` the rules (no e-mail addresses; amounts with two decimals and CHF
in project 1). ``tasks.TASKS`` are the questions; ``checks`` judges answers against values
computed from the data. ``benchmarks/bench_harder_tasks.py`` runs them.
"""
