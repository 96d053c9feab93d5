"""Drives a running ddp-proxy (the demo) the way Python analysts do: SQLAlchemy
Core select() over tables reflected with schema='public', and pandas
read_sql over both front ends (Debian's python3-sqlalchemy, python3-pandas,
python3-psycopg2, python3-pymysql). Prints one line per check; exits
non-zero on the first failure.

Also psycopg2's named (server-side) cursors, which send DECLARE ... CURSOR,
FETCH and CLOSE, over a private aggregate and over a catalog query, and
the startup probes of drivers and BI tools on both front ends.

Usage: bi_clients.py HOST PG_PORT MYSQL_PORT"""
import sys

import psycopg2
import pymysql

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
# SQLAlchemy's has_table() over the MySQL front end counts rows of the
# emulated information_schema: an integer, so a missing table is false.
assert sa.inspect(my).has_table("people")
assert not sa.inspect(my).has_table("no_such_table")
assert sa.inspect(pg).has_table("people", schema="public")
assert not sa.inspect(pg).has_table("no_such_table", schema="public")
print("pandas mysql ok")

# psycopg2 named cursors: DECLARE "name" CURSOR WITHOUT HOLD FOR ..., then
# FETCH FORWARD itersize FROM "name" until empty, then CLOSE.
conn = psycopg2.connect(host=host, port=pg_port, user="analyst", password="demo", dbname="demo", sslmode="disable")
with conn.cursor(name="agg") as cur:
    cur.itersize = 1  # one FETCH per row
    cur.execute("SELECT sex, COUNT(*) AS n FROM people WHERE age > %s GROUP BY sex ORDER BY sex", (30,))
    rows = list(cur)
    assert [r[0] for r in rows] == ["Female", "Male"] and all(isinstance(r[1], int) for r in rows), rows
    assert [d.name for d in cur.description] == ["sex", "n"], cur.description
with conn.cursor(name="cat") as cur:
    cur.execute("SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1")
    first = cur.fetchmany(2)
    rest = cur.fetchall()
    names = [r[0] for r in first + rest]
    assert "people" in names and "checkins" in names and len(first) == 2, names
conn.commit()
with conn.cursor(name="held", withhold=True) as cur:
    cur.execute("SELECT COUNT(*) FROM people")
    assert cur.fetchone()[0] > 1000
conn.rollback()
# A row-level read is refused at DECLARE, as it is alone.
try:
    with conn.cursor(name="rows") as cur:
        cur.execute("SELECT age FROM people")
        cur.fetchall()
    raise AssertionError("a named cursor read rows")
except psycopg2.Error as e:
    assert e.pgcode == "42501", (e.pgcode, e)
conn.rollback()
print("psycopg named cursors ok")

# Startup probes (Grafana, psqlODBC/Tableau, Metabase, pgcli) with the
# types the tools read.
with conn.cursor() as cur:
    cur.execute("SELECT current_setting('server_version_num')::int")
    assert cur.fetchone()[0] >= 90000
    cur.execute("SELECT pg_client_encoding()")
    assert cur.fetchone()[0] == "UTF8"
    cur.execute("SELECT now(), current_timestamp")
    now, ts = cur.fetchone()
    assert now.year >= 2024 and now.tzinfo is not None and ts == now, (now, ts)
    cur.execute("SELECT set_config('application_name', 'probe', false)")
    assert cur.fetchone()[0] == "probe"
    cur.execute("SHOW application_name")
    assert cur.fetchone()[0] == "probe"
    cur.execute("SELECT * FROM unnest(current_schemas(true))")
    assert [d.name for d in cur.description] == ["unnest"] and [r[0] for r in cur.fetchall()] == ["pg_catalog", "public"]
conn.rollback()
my_conn = pymysql.connect(host=host, port=int(my_port), user="analyst", password="demo", database="demo")
with my_conn.cursor() as cur:
    cur.execute("SELECT time_format(timediff(now(), utc_timestamp()), '%H:%i')")
    assert cur.fetchone()[0] == "00:00"
    cur.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'people'")
    assert cur.fetchone()[0] == 1
print("startup probes ok")
