"""Drives a running ddp-proxy with psycopg2 and SQLAlchemy (Debian's
python3-psycopg2, python3-sqlalchemy). Prints one line per check; exits 1
on the first failure.

Usage: python_client.py HOST PORT
         the demo: aggregates, a refusal, the budget view
       python_client.py HOST PORT inspect DB SCHEMA TABLE COL:TYPE,... [PK]
         SQLAlchemy's inspector must find TABLE in SCHEMA with exactly these
         columns (SQLAlchemy type class names) and primary key PK (none if
         omitted or empty), and no foreign keys or indexes."""
import sys

import psycopg2
import sqlalchemy

host, port = sys.argv[1], sys.argv[2]


def inspect(db, schema, table, columns, pk):
    engine = sqlalchemy.create_engine(f"postgresql+psycopg2://analyst:demo@{host}:{port}/{db}?sslmode=disable")
    insp = sqlalchemy.inspect(engine)
    names = insp.get_table_names(schema=schema)
    assert table in names, names
    assert "hidden_t" not in names, names
    assert schema in insp.get_schema_names(), insp.get_schema_names()
    assert insp.has_table(table, schema=schema)
    assert not insp.has_table("hidden_t", schema=schema)
    cols = insp.get_columns(table, schema=schema)
    got = [f"{c['name']}:{type(c['type']).__name__}" for c in cols]
    assert got == columns, (got, columns)
    got_pk = insp.get_pk_constraint(table, schema=schema)["constrained_columns"]
    assert got_pk == ([pk] if pk else []), got_pk
    assert insp.get_foreign_keys(table, schema=schema) == []
    print("inspector ok", got, got_pk)


if len(sys.argv) > 3 and sys.argv[3] == "inspect":
    inspect(sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7].split(","), sys.argv[8] if len(sys.argv) > 8 else "")
    sys.exit(0)

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
