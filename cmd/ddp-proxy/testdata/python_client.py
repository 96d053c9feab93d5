"""Drives a running ddp-proxy demo with psycopg2 and SQLAlchemy (Debian's
python3-psycopg2, python3-sqlalchemy). Prints one line per check; exits 1
on the first failure. Usage: python_client.py HOST PORT"""
import sys

import psycopg2
import sqlalchemy

host, port = sys.argv[1], sys.argv[2]

conn = psycopg2.connect(host=host, port=port, user="analyst", password="demo", dbname="demo", sslmode="disable")
conn.autocommit = True
cur = conn.cursor()
cur.execute("SELECT sex, COUNT(*) FROM people WHERE age > %s GROUP BY sex", (30,))
rows = dict(cur.fetchall())
assert set(rows) == {"Female", "Male"}, rows
assert any("spent" in n for n in conn.notices), conn.notices
print("psycopg2 aggregate ok", rows)
try:
    cur.execute("SELECT * FROM people")
    raise SystemExit("SELECT * was answered")
except psycopg2.Error as e:
    assert e.pgcode == "42501", e.pgcode
print("psycopg2 refusal ok")
cur.execute("SELECT COUNT(*) FROM people")
assert cur.fetchone()[0] > 4000
conn.close()

engine = sqlalchemy.create_engine(f"postgresql+psycopg2://analyst:demo@{host}:{port}/demo?sslmode=disable")
with engine.connect() as c:
    r = c.execute(sqlalchemy.text("SELECT income, AVG(hours_per_week) AS h FROM people GROUP BY income")).fetchall()
    assert len(r) == 2 and all(1 <= row.h <= 99 for row in r), r
    b = c.execute(sqlalchemy.text("SELECT dataset, epsilon_left FROM ddp.budget")).fetchall()
    assert {"census", "social"} <= {row.dataset for row in b}, b
print("sqlalchemy ok")
