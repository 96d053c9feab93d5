#!/usr/bin/env bash
# The timing channel (README, "Timing"): response times of private answers
# whose WHERE clause is slow only on rows where a cheap condition is false,
# through ddp-proxy without padding, with listen.min_response_ms, and with
# a short statement timeout (where the same effect becomes a timeout).
#
#   bench/timing.sh [runs] [min_response_ms] [short statement_timeout]
#
# Needs psql and a PostgreSQL server: DDP_BENCH_DSN (default
# postgres://postgres@127.0.0.1:5432/test). Creates and drops
# bench_timing_people there (200,000 rows). Uses port 15434.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-15}
PAD=${2:-1000}
SHORT=${3:-200ms}
DSN=${DDP_BENCH_DSN:-postgres://postgres@127.0.0.1:5432/test}
work=$(mktemp -d)
cleanup() {
  [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null
  wait 2>/dev/null
  psql "$DSN" -qX -c "DROP TABLE IF EXISTS bench_timing_people" || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== loading bench_timing_people (200000 rows, bio: 256 hex characters)"
psql "$DSN" -qX -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS bench_timing_people;
CREATE TABLE bench_timing_people AS
  SELECT g AS id, 18 + g % 70 AS age, (g * 7919) % 200000 AS salary, repeat(md5(g::text), 8) AS bio
  FROM generate_series(1, 200000) AS g;
ALTER TABLE bench_timing_people ADD PRIMARY KEY (id);
ANALYZE bench_timing_people;
SQL
go build -o "$work/ddp-proxy" ./cmd/ddp-proxy
go build -o "$work/timingbench" ./bench/timingbench

serve() { # statement_timeout min_response_ms
  [ -n "${proxy_pid:-}" ] && { kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true; }
  cat > "$work/policy.yaml" <<YAML
version: 1
backend: {driver: postgres, dsn: "${DSN}?sslmode=disable", statement_timeout: $1}
listen: {postgres: 127.0.0.1:15434, mysql: "off", min_response_ms: $2}
ledger: {path: ledger.db}
users:
  - name: bench
    password_env: DDP_BENCH_PASSWORD
    budgets: {hr: {epsilon: 1000000000}}
    max_epsilon: 1
datasets:
  hr:
    tables:
      bench_timing_people:
        unit: id
        columns:
          id: {type: integer, bounds: [0, 1000000]}
          age: {type: integer, bounds: [0, 120]}
          salary: {type: integer, bounds: [0, 200000]}
          bio: {type: text}
YAML
  DDP_BENCH_PASSWORD=bench "$work/ddp-proxy" serve --policy "$work/policy.yaml" > "$work/proxy.log" 2>&1 &
  proxy_pid=$!
  sleep 1
}
bench() { "$work/timingbench" -dsn "postgres://bench:bench@127.0.0.1:15434/test?sslmode=disable" -n "$RUNS" -start "$1"; }

echo; echo "== no padding (statement_timeout 30s)"
serve 30s 0; bench 0
echo; echo "== min_response_ms: $PAD"
serve 30s "$PAD"; bench 1000
echo; echo "== statement_timeout $SHORT, no padding"
serve "$SHORT" 0; bench 2000
