#!/usr/bin/env bash
# MySQL front end overhead: drives the same aggregate workloads with a Go
# go-sql-driver/mysql loop (bench/mysqlbench) directly against MariaDB and
# through ddp-proxy (MySQL front end, MySQL backend), in one run, and
# prints throughput and latency with ratios against direct access.
#
#   bench/mysql.sh [rows] [seconds] [clients]
#
# Needs the mariadb client and a MariaDB/MySQL server: DDP_BENCH_MYSQL_DSN
# (default root@tcp(127.0.0.1:3306)/test, go-sql-driver syntax). Creates
# and drops bench_my_people and bench_my_tiny there. Uses port 13307.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
SECS=${2:-10}
CLIENTS=${3:-4}
DSN=${DDP_BENCH_MYSQL_DSN:-root@tcp(127.0.0.1:3306)/test}
# The mariadb CLI's view of the same DSN (user, host, port, database).
MY_USER=${DSN%%@*}; MY_USER=${MY_USER%%:*}
MY_ADDR=${DSN#*tcp(}; MY_ADDR=${MY_ADDR%%)*}
MY_DB=${DSN##*/}; MY_DB=${MY_DB%%\?*}
mysql_cli() { mariadb -h "${MY_ADDR%:*}" -P "${MY_ADDR#*:}" -u "$MY_USER" ${DDP_BENCH_MYSQL_PASSWORD:+-p"$DDP_BENCH_MYSQL_PASSWORD"} "$MY_DB" "$@"; }
work=$(mktemp -d)
cleanup() {
  [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null
  wait 2>/dev/null
  mysql_cli -e "DROP TABLE IF EXISTS bench_my_people, bench_my_tiny" || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== loading bench_my_people ($ROWS rows) and bench_my_tiny (100 rows)"
if mysql_cli -N -e "SELECT VERSION()" | grep -qi mariadb; then
  seq="SELECT seq AS i FROM seq_1_to_$ROWS"; pre=""
else
  pre="SET SESSION cte_max_recursion_depth = 100000000;"
  seq="WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $ROWS) SELECT i FROM s"
fi
mysql_cli <<SQL
$pre
DROP TABLE IF EXISTS bench_my_people, bench_my_tiny;
CREATE TABLE bench_my_people (person_id BIGINT NOT NULL PRIMARY KEY, age INT, sex VARCHAR(1)) ENGINE=InnoDB;
INSERT INTO bench_my_people SELECT i, 18 + (i * 7919) % 73, IF(i % 3 = 0, 'F', 'M') FROM ($seq) AS g;
CREATE TABLE bench_my_tiny LIKE bench_my_people;
INSERT INTO bench_my_tiny SELECT * FROM bench_my_people WHERE person_id <= 100;
SQL

cat > "$work/policy.yaml" <<YAML
version: 1
backend: {driver: mysql, dsn: "${DSN}", max_open_conns: $((CLIENTS * 2))}
listen: {postgres: "off", mysql: 127.0.0.1:13307}
ledger: {path: ledger.db}
users:
  - name: bench
    password_env: DDP_BENCH_PASSWORD
    budgets: {bench: {epsilon: 1000000000}}
    max_epsilon: 1
datasets:
  bench:
    tables:
      bench_my_people:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
      bench_my_tiny:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
YAML
go build -o "$work/ddp-proxy" ./cmd/ddp-proxy
go build -o "$work/mysqlbench" ./bench/mysqlbench
DDP_BENCH_PASSWORD=bench "$work/ddp-proxy" serve --policy "$work/policy.yaml" > "$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 50); do
  grep -q "MySQL front end on" "$work/proxy.log" && break
  sleep 0.2
done

targets=("direct|${DSN}" "ddp-proxy|bench:bench@tcp(127.0.0.1:13307)/${MY_DB}")
declare -A queries=(
  # fresh: a new WHERE literal each time, so every query is a new, charged release.
  [fresh_big]="SELECT sex, COUNT(*) FROM bench_my_people WHERE age <> -%d GROUP BY sex"
  [fresh_tiny]="SELECT sex, COUNT(*) FROM bench_my_tiny WHERE age <> -%d GROUP BY sex"
  # cached: the same query every time, answered from the ledger after the first.
  [cached]="SELECT sex, COUNT(*) FROM bench_my_tiny WHERE age > 30 GROUP BY sex"
)

printf '\n%-12s %-10s %12s %12s %10s\n' workload target "queries/s" "latency ms" "vs direct"
for w in fresh_big fresh_tiny cached; do
  base=""
  for t in "${targets[@]}"; do
    name=${t%%|*}; dsn=${t#*|}
    read -r qps lat < <("$work/mysqlbench" -dsn "$dsn" -query "${queries[$w]}" -c "$CLIENTS" -t "${SECS}s")
    [ -z "$base" ] && base=$lat
    ratio=$(awk -v a="$lat" -v b="$base" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
    printf '%-12s %-10s %12s %12s %10s\n' "$w" "$name" "$qps" "$lat" "$ratio"
  done
done
