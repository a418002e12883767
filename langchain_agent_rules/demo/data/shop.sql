-- The demo shop database: built into the cache folder on first use by
-- langchain_agent_rules.demo.demo_database_url(). Amounts are in EUR.
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    active INTEGER NOT NULL CHECK (active IN (0, 1))
);

CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    price REAL NOT NULL
);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    product_id INTEGER NOT NULL REFERENCES products (id),
    quantity INTEGER NOT NULL,
    amount REAL NOT NULL,
    ordered_at TEXT NOT NULL
);

INSERT INTO customers (id, name, email, city, active) VALUES
    (1, 'Alice Martin', 'alice.martin@example.com', 'Lyon', 1),
    (2, 'Bruno Keller', 'bruno.keller@example.com', 'Zurich', 1),
    (3, 'Chloe Dubois', 'chloe.dubois@example.com', 'Paris', 0),
    (4, 'David Novak', 'david.novak@example.com', 'Prague', 1),
    (5, 'Elena Rossi', 'elena.rossi@example.com', 'Milan', 1),
    (6, 'Farid Haddad', 'farid.haddad@example.com', 'Marseille', 0),
    (7, 'Greta Lind', 'greta.lind@example.com', 'Stockholm', 1),
    (8, 'Hugo Silva', 'hugo.silva@example.com', 'Lisbon', 1),
    (9, 'Ines Moreau', 'ines.moreau@example.com', 'Nantes', 1),
    (10, 'Jonas Weber', 'jonas.weber@example.com', 'Berlin', 0),
    (11, 'Klara Horvat', 'klara.horvat@example.com', 'Zagreb', 1),
    (12, 'Luca Bianchi', 'luca.bianchi@example.com', 'Turin', 1);

INSERT INTO products (id, name, price) VALUES
    (1, 'Green tea', 8.50),
    (2, 'Black tea', 7.25),
    (3, 'Teapot', 45.00),
    (4, 'Tea cups (set of 4)', 32.00),
    (5, 'Gift box', 60.00);

INSERT INTO orders (id, customer_id, product_id, quantity, amount, ordered_at) VALUES
    (1, 1, 1, 2, 17.00, '2026-01-05'),
    (2, 1, 3, 1, 45.00, '2026-01-05'),
    (3, 2, 5, 2, 120.00, '2026-01-09'),
    (4, 4, 2, 4, 29.00, '2026-01-12'),
    (5, 5, 4, 1, 32.00, '2026-01-15'),
    (6, 5, 1, 1, 8.50, '2026-01-15'),
    (7, 7, 5, 1, 60.00, '2026-01-20'),
    (8, 8, 2, 2, 14.50, '2026-01-22'),
    (9, 9, 3, 1, 45.00, '2026-01-28'),
    (10, 11, 1, 3, 25.50, '2026-02-02'),
    (11, 12, 4, 2, 64.00, '2026-02-03'),
    (12, 2, 2, 1, 7.25, '2026-02-07'),
    (13, 4, 5, 1, 60.00, '2026-02-10'),
    (14, 8, 3, 2, 90.00, '2026-02-14'),
    (15, 3, 1, 1, 8.50, '2025-11-30');
