-- The README's shop database, created by the postgres image on its first
-- start (docker-entrypoint-initdb.d).
CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL,
  amount numeric(10,2) NOT NULL, placed date NOT NULL, qty integer NOT NULL);
ALTER TABLE orders REPLICA IDENTITY FULL; -- deleted rows keep all their columns
INSERT INTO orders VALUES (1, 'ada', 12.50, '2026-03-01', 1), (2, 'bob', 7.25, '2026-03-02', 3);
