"""Drives a running ddp-proxy (the demo) the way Python analysts do: SQLAlchemy
Core select() over tables reflected with schema='public', and pandas
read_sql over both front ends (Debian's python3-sqlalchemy, python3-pandas,
python3-psycopg2, python3-pymysql). Prints one line per check; exits
non-zero on the first failure.

Usage: bi_clients.py HOST PG_PORT MYSQL_PORT"""
import sys

import pandas as pd
import sqlalchemy as sa

host, pg_port, my_port = sys.argv[1], sys.argv[2], sys.argv[3]

pg = sa.create_engine(f"postgresql+psycopg2://analyst:demo@{host}:{pg_port}/demo?sslmode=disable")
my = sa.create_engine(f"mysql+pymysql://analyst:demo@{host}:{my_port}/demo")

# SQLAlchemy Core over reflected tables: the SQL it compiles names every
# column with its table and every table with its schema.
md = sa.MetaData()
people = sa.Table("people", md, autoload_with=pg, schema="public")
assert {"age", "sex", "income", "hours_per_week"} <= set(people.c.keys()), people.c.keys()
with pg.connect() as c:
    q = sa.select(people.c.sex, sa.func.count().label("n")).group_by(people.c.sex).order_by(people.c.sex)
    rows = c.execute(q).fetchall()
    assert [r.sex for r in rows] == ["Female", "Male"], rows
    assert all(r.n > 500 for r in rows), rows
    q = sa.select(sa.func.avg(people.c.age).label("a")).where(people.c.sex == "Female")
    a = c.execute(q).scalar_one()
    assert 17 <= a <= 90, a
    q = (sa.select(people.c.income, sa.func.sum(people.c.hours_per_week).label("h"), sa.func.count().label("n"))
         .where(people.c.age.between(25, 65)).group_by(people.c.income).order_by(people.c.income))
    rows = c.execute(q).fetchall()
    assert [r.income for r in rows] == ["<=50K", ">50K"], rows
    # Bound parameters (psycopg2 interpolates them client-side).
    q = sa.select(sa.func.count().label("n")).select_from(people).where(people.c.age > sa.bindparam("lo"))
    n = c.execute(q, {"lo": 40}).scalar_one()
    assert 0 < n < 5000, n
print("sqlalchemy core ok")

# pandas read_sql: a query string, then a Core select, on the PostgreSQL
# front end; the numbers arrive as numbers, not strings.
df = pd.read_sql("SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY sex", pg)
assert list(df["sex"]) == ["Female", "Male"], df
assert pd.api.types.is_integer_dtype(df["n"]), df.dtypes
df = pd.read_sql(sa.select(people.c.race, sa.func.avg(people.c.hours_per_week).label("h")).group_by(people.c.race), pg)
assert len(df) == 5 and pd.api.types.is_float_dtype(df["h"]), df
print("pandas postgres ok")

# pandas on the MySQL front end (pymysql).
df = pd.read_sql("SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY sex", my)
assert list(df["sex"]) == ["Female", "Male"], df
assert pd.api.types.is_integer_dtype(df["n"]), df.dtypes
df = pd.read_sql("SELECT income, AVG(age) AS a FROM people WHERE age BETWEEN 25 AND 65 GROUP BY income", my)
assert len(df) == 2 and all(25 <= v <= 65 for v in df["a"]), df
print("pandas mysql ok")
