CREATE TABLE departments (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    manager_id INTEGER REFERENCES agents (id)
);
CREATE TABLE agents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    department_id INTEGER NOT NULL REFERENCES departments (id),
    manager_id INTEGER REFERENCES agents (id),
    role TEXT NOT NULL,
    hired TEXT NOT NULL,
    hourly_rate REAL NOT NULL
);
CREATE TABLE tickets (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    category TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL,
    requester TEXT NOT NULL,
    agent_id INTEGER REFERENCES agents (id),
    opened TEXT NOT NULL,
    resolved TEXT,
    hours REAL NOT NULL
);
