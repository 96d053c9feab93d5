#!/usr/bin/env bash
# Proxy overhead: drives the same aggregate workloads with pgbench directly
# against PostgreSQL, through PgBouncer (when installed: the reference for
# pure-proxy overhead) and through ddp-proxy, in one run, and prints
# throughput and latency with ratios against direct access.
#
#   bench/pgbench.sh [rows] [seconds] [clients]
#
# Needs psql, pgbench and a PostgreSQL server: DDP_BENCH_DSN (default
# postgres://postgres@127.0.0.1:5432/test). Uses ports 15433 and 16432.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
SECS=${2:-10}
CLIENTS=${3:-4}
DSN=${DDP_BENCH_DSN:-postgres://postgres@127.0.0.1:5432/test}
PGHOST=127.0.0.1 PGPORT=5432
work=$(mktemp -d)
cleanup() { [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null; [ -n "${bouncer_pid:-}" ] && kill "$bouncer_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "== loading bench_people ($ROWS rows) and bench_tiny (100 rows)"
psql "$DSN" -qX -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS bench_people, bench_tiny;
CREATE TABLE bench_people AS
  SELECT i AS person_id, (18 + (i::bigint * 7919) % 73)::int AS age, CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END AS sex
  FROM generate_series(1, $ROWS) AS i;
CREATE TABLE bench_tiny AS SELECT * FROM bench_people WHERE person_id <= 100;
ALTER TABLE bench_people ADD PRIMARY KEY (person_id);
ALTER TABLE bench_tiny ADD PRIMARY KEY (person_id);
ANALYZE bench_people; ANALYZE bench_tiny;
SQL

cat > "$work/policy.yaml" <<YAML
version: 1
backend: {driver: postgres, dsn: "${DSN}?sslmode=disable", max_open_conns: $((CLIENTS * 2))}
listen: {postgres: 127.0.0.1:15433, mysql: "off"}
ledger: {path: ${DDP_BENCH_LEDGER:-ledger.db}}
users:
  - name: bench
    password_env: DDP_BENCH_PASSWORD
    budgets: {bench: {epsilon: 1000000000}}
    max_epsilon: 1
datasets:
  bench:
    tables:
      bench_people:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
      bench_tiny:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
YAML
go build -o "$work/ddp-proxy" ./cmd/ddp-proxy
DDP_BENCH_PASSWORD=bench "$work/ddp-proxy" serve --policy "$work/policy.yaml" > "$work/proxy.log" 2>&1 &
proxy_pid=$!

targets=("direct|$DSN")
if command -v pgbouncer >/dev/null; then
  cat > "$work/pgbouncer.ini" <<INI
[databases]
test = host=127.0.0.1 port=5432 dbname=test user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 16432
auth_type = trust
auth_file = $work/users.txt
pool_mode = transaction
max_client_conn = 100
default_pool_size = $((CLIENTS * 2))
unix_socket_dir =
logfile = $work/pgbouncer.log
INI
  echo '"postgres" ""' > "$work/users.txt"
  chmod 755 "$work"; chmod 644 "$work/pgbouncer.ini" "$work/users.txt"; touch "$work/pgbouncer.log"; chmod 666 "$work/pgbouncer.log"
  pgbouncer -u postgres "$work/pgbouncer.ini" >/dev/null 2>&1 &
  bouncer_pid=$!
  targets+=("pgbouncer|postgres://postgres@127.0.0.1:16432/test")
fi
targets+=("ddp-proxy|postgres://bench:bench@127.0.0.1:15433/test")
sleep 1

# fresh: a new WHERE literal each time, so every query is a new, charged release.
printf '\\set r random(1, 1000000000)\nSELECT sex, COUNT(*) FROM %s WHERE age <> -:r GROUP BY sex;\n' bench_people > "$work/fresh_big.sql"
printf '\\set r random(1, 1000000000)\nSELECT sex, COUNT(*) FROM %s WHERE age <> -:r GROUP BY sex;\n' bench_tiny > "$work/fresh_tiny.sql"
# cached: the same query every time, answered from the ledger after the first.
printf 'SELECT sex, COUNT(*) FROM bench_tiny WHERE age > 30 GROUP BY sex;\n' > "$work/cached.sql"

run() { # name dsn script
  PGPASSWORD=bench pgbench -n -M simple -f "$3" -c "$CLIENTS" -j "$CLIENTS" -T "$SECS" "$2" 2>/dev/null |
    awk -v t="$1" '/latency average/ {lat=$4} /^tps/ {tps=$3} END {printf "%s %s %s\n", t, tps, lat}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
printf '\n%-12s %-10s %12s %12s %10s %10s\n' workload target tps "latency ms" "vs direct" "vs bouncer"
declare -A lat_of
for w in fresh_big fresh_tiny cached; do
  base=""; bouncer=""
  for t in "${targets[@]}"; do
    name=${t%%|*}; dsn=${t#*|}
    read -r _ tps lat < <(run "$name" "$dsn" "$work/$w.sql")
    lat_of[$w.$name]=$lat
    [ -z "$base" ] && base=$lat
    [ "$name" = pgbouncer ] && bouncer=$lat
    vsb="-"; [ -n "$bouncer" ] && vsb=$(ratio "$lat" "$bouncer")
    printf '%-12s %-10s %12s %12s %10s %10s\n' "$w" "$name" "$tps" "$lat" "$(ratio "$lat" "$base")" "$vsb"
  done
done
psql "$DSN" -qX -c "DROP TABLE IF EXISTS bench_people, bench_tiny"

# The price of one durable ledger write on the disk the proxy's ledger is
# on (a fresh answer waits for exactly one: the reservation; its commit
# record rides on the next write), to compare with the fresh_tiny gap.
write_ns=$(TMPDIR="$work" go test ./ledger -run '^$' -bench 'ReserveCommit/sequential-deferred$' -benchtime 300x 2>/dev/null |
  awk '/sequential-deferred/ {print $3}')
if [ -n "$write_ns" ] && [ -n "${lat_of[fresh_tiny.pgbouncer]:-}" ]; then
  awk -v w="$write_ns" -v d="${lat_of[fresh_tiny.ddp-proxy]}" -v b="${lat_of[fresh_tiny.pgbouncer]}" 'BEGIN {
    printf "\none durable ledger write (bbolt commit, sequential): %.3f ms\n", w / 1e6
    printf "fresh_tiny: ddp-proxy - PgBouncer = %.3f ms = %.2f ledger writes\n", d - b, (d - b) / (w / 1e6) }'
fi
