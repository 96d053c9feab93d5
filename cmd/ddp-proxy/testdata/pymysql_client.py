"""Drives a running ddp-proxy demo's MySQL front end with pymysql and
SQLAlchemy (Debian's python3-pymysql, python3-sqlalchemy). Prints one line
per check; exits 1 on the first failure. Usage: pymysql_client.py HOST PORT"""
import sys

import pymysql
import sqlalchemy

host, port = sys.argv[1], int(sys.argv[2])

conn = pymysql.connect(host=host, port=port, user="analyst", password="demo", database="demo", autocommit=True)
cur = conn.cursor()
cur.execute("SET @ddp_epsilon = 0.5")
cur.execute("SELECT sex, COUNT(*) FROM people WHERE age > %s GROUP BY sex", (30,))
rows = dict(cur.fetchall())
assert set(rows) == {"Female", "Male"}, rows
assert all(isinstance(v, int) for v in rows.values()), rows
cur.execute("SHOW WARNINGS")
warnings = [w[2] for w in cur.fetchall()]
assert any("spent ε = 0.5" in w for w in warnings), warnings
print("pymysql aggregate ok", rows)
try:
    cur.execute("SELECT * FROM people")
    raise SystemExit("SELECT * was answered")
except pymysql.err.MySQLError as e:
    assert e.args[0] == 1142, e.args
print("pymysql refusal ok")
cur.execute("SELECT COUNT(*) FROM people")
assert cur.fetchone()[0] > 4000
cur.execute("SHOW TABLES")
assert ("people",) in cur.fetchall()
conn.close()

engine = sqlalchemy.create_engine(f"mysql+pymysql://analyst:demo@{host}:{port}/demo")
with engine.connect() as c:
    r = c.execute(sqlalchemy.text("SELECT income, AVG(hours_per_week) AS h FROM people GROUP BY income")).fetchall()
    assert len(r) == 2 and all(1 <= row.h <= 99 for row in r), r
    b = c.execute(sqlalchemy.text("SELECT * FROM ddp.budget")).fetchall()
    assert {"census", "social"} <= {row.dataset for row in b}, b
    names = sqlalchemy.inspect(c).get_table_names()
    assert "people" in names, names
print("sqlalchemy ok")
