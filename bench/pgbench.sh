#!/usr/bin/env bash
# Proxy overhead: the same small aggregate driven by pgbench against
# PostgreSQL directly, through PgBouncer (the reference for pure-proxy
# overhead) and through ddp-proxy, interleaved in one run: for each client
# count, ROUNDS rounds in which every target runs SECS seconds in turn, so
# the machine's background load falls on all of them alike. Prints one
# table per workload with the ratios the targets are stated in (README,
# "Performance"):
#
#   fresh  (a new WHERE literal per query: a charged release each time):
#          latency vs direct at 1 client (target ≤ 2.5×), throughput vs
#          direct at 64 clients (target ≥ 0.5×)
#   cached (the same query each time: answered from the ledger):
#          latency vs PgBouncer (target ≤ 1.0×)
#
# and the proxy's CPU time per answer (user + system, from /proc), which
# the machine's other load disturbs far less than latency does; then the
# machine's CPU per answer by process (PostgreSQL when it runs on this
# machine, pgbench, the proxy), whose sums explain the throughput ratios
# when the clients share the machine. CPU figures leave out what
# connecting costs (SCRAM through ddp-proxy, a new PostgreSQL backend per
# client), which pgbench's tps leaves out too: a connect-only run before
# each slice measures it.
#
#   bench/pgbench.sh [seconds per slice] [rounds] [clients...]
#   e.g. bench/pgbench.sh 5 3 1 4 64
#
# Needs psql, pgbench (Debian: apt-get install postgresql-client
# postgresql-contrib, or the postgresql package), a PostgreSQL server
# (DDP_BENCH_DSN, default postgres://postgres@127.0.0.1:5432/test) with
# max_connections ≥ the largest client count + 2 × POOL (the backend pool
# of both ddp-proxy and PgBouncer, default 12: on a small machine more
# connections only queue on the CPUs), and PgBouncer
# (Debian: apt-get install pgbouncer; without it the PgBouncer column is
# left out). BIG=N also runs the fresh query on an N-row table.
# DDP_BENCH_PROFILE=FILE writes the proxy's CPU profile (go tool pprof;
# merged with others by `go tool pprof -proto A B > cmd/ddp-proxy/default.pgo`
# it is the profile the binary's build is guided by, README "Performance").
# DDP_BENCH_MEMPROFILE=FILE writes its allocation profile at the end.
# DDP_BENCH_STRACE=1 counts the proxy's fdatasync/fsync/pwrite64 calls per
# fresh answer during one extra 1-client slice (needs strace).
# DDP_BENCH_LEASE sets ledger.lease (default: the policy default; 0: no
# budget leases, an fdatasync per charge group).
# The ledger is written under DDP_BENCH_LEDGER_DIR (default: a temporary
# directory under the repository, so on its disk, not a tmpfs).
# Uses ports 15433 and 16432; creates and drops bench_tiny_<run> (and
# bench_people_<run> with BIG), names unique to the run.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
ROUNDS=${2:-3}
shift 2 2>/dev/null || shift $#
CLIENTS=("$@")
[ ${#CLIENTS[@]} -eq 0 ] && CLIENTS=(1 4 64)
BIG=${BIG:-0}
POOL=${POOL:-12}
DSN=${DDP_BENCH_DSN:-postgres://postgres@127.0.0.1:5432/test}
maxc=0
for c in "${CLIENTS[@]}"; do [ "$c" -gt "$maxc" ] && maxc=$c; done
work=$(mktemp -d)
# Table names unique to this run: other runs (or tests) on the same
# server may use bench_tiny at the same time.
suffix=$(basename "$work" | tr -c 'a-zA-Z0-9\n' '_' | tr 'A-Z' 'a-z')
tiny=bench_tiny_$suffix
people=bench_people_$suffix
ledger_dir=$(mktemp -d "${DDP_BENCH_LEDGER_DIR:-$PWD}/.bench-ledger.XXXXXX")
cleanup() {
  [ -n "${proxy_pid:-}" ] && kill -INT "$proxy_pid" 2>/dev/null
  [ -n "${bouncer_pid:-}" ] && kill "$bouncer_pid" 2>/dev/null
  wait 2>/dev/null
  psql "$DSN" -qX -c "DROP TABLE IF EXISTS $people, $tiny" 2>/dev/null || true
  rm -rf "$work" "$ledger_dir"
}
trap cleanup EXIT

for cmd in psql pgbench; do
  command -v "$cmd" >/dev/null || { echo "$cmd is missing (Debian: apt-get install postgresql-client)" >&2; exit 1; }
done
if ! command -v pgbouncer >/dev/null; then
  echo "note: pgbouncer is not installed (Debian: apt-get install pgbouncer); its column is left out" >&2
fi

echo "== loading $tiny (100 rows)$([ "$BIG" -gt 0 ] && echo " and $people ($BIG rows)")"
big_sql=""
if [ "$BIG" -gt 0 ]; then
  big_sql="CREATE TABLE $people AS
  SELECT i AS person_id, (18 + (i::bigint * 7919) % 73)::int AS age, CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END AS sex
  FROM generate_series(1, $BIG) AS i;
ALTER TABLE $people ADD PRIMARY KEY (person_id); ANALYZE $people;"
fi
psql "$DSN" -qX -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS $people, $tiny;
CREATE TABLE $tiny AS
  SELECT i AS person_id, (18 + (i::bigint * 7919) % 73)::int AS age, CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END AS sex
  FROM generate_series(1, 100) AS i;
ALTER TABLE $tiny ADD PRIMARY KEY (person_id);
ANALYZE $tiny;
$big_sql
SQL

cat > "$work/policy.yaml" <<YAML
version: 1
backend: {driver: postgres, dsn: "${DSN}?sslmode=disable", max_open_conns: $POOL}
listen: {postgres: 127.0.0.1:15433, mysql: "off"}
ledger: {path: $ledger_dir/ledger.db${DDP_BENCH_LEASE:+, lease: $DDP_BENCH_LEASE}}
users:
  - name: bench
    password_env: DDP_BENCH_PASSWORD
    budgets: {bench: {epsilon: 1000000000}}
    max_epsilon: 1
datasets:
  bench:
    tables:
      $people:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
      $tiny:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
YAML
go build -o "$work/ddp-proxy" ./cmd/ddp-proxy
profile=()
[ -n "${DDP_BENCH_PROFILE:-}" ] && profile=(--cpuprofile "$DDP_BENCH_PROFILE")
[ -n "${DDP_BENCH_MEMPROFILE:-}" ] && profile+=(--memprofile "$DDP_BENCH_MEMPROFILE")
DDP_BENCH_PASSWORD=bench "$work/ddp-proxy" serve --policy "$work/policy.yaml" "${profile[@]}" > "$work/proxy.log" 2>&1 &
proxy_pid=$!

direct="postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
proxy="postgres://bench:bench@127.0.0.1:15433/test?sslmode=disable"
bouncer=""
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
max_client_conn = $((maxc + 10))
default_pool_size = $POOL
unix_socket_dir =
logfile = $work/pgbouncer.log
INI
  echo '"postgres" ""' > "$work/users.txt"
  chmod 755 "$work"; chmod 644 "$work/pgbouncer.ini" "$work/users.txt"; touch "$work/pgbouncer.log"; chmod 666 "$work/pgbouncer.log"
  pgbouncer -u postgres "$work/pgbouncer.ini" >/dev/null 2>&1 &
  bouncer_pid=$!
  bouncer="postgres://postgres@127.0.0.1:16432/test?sslmode=disable"
fi
for _ in $(seq 1 50); do
  psql "$proxy" -qXAtc "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done

# fresh: a new WHERE literal each time, so every query is a new, charged
# release. Direct and PgBouncer run the same text.
printf '\\set r random(1, 1000000000)\nSELECT sex, COUNT(*) FROM %s WHERE age <> -:r GROUP BY sex;\n' "$tiny" > "$work/fresh.sql"
printf '\\set r random(1, 1000000000)\nSELECT sex, COUNT(*) FROM %s WHERE age <> -:r GROUP BY sex;\n' "$people" > "$work/fresh_big.sql"
# cached: the same query every time, answered from the ledger after the first.
printf 'SELECT sex, COUNT(*) FROM %s WHERE age > 30 GROUP BY sex;\n' "$tiny" > "$work/cached.sql"

# The proxy's CPU time (user + system, clock ticks) from /proc.
proxy_ticks() { awk '{print $14 + $15}' "/proc/$proxy_pid/stat"; }
bouncer_ticks() { [ -n "${bouncer_pid:-}" ] && awk '{print $14 + $15}' "/proc/$bouncer_pid/stat" 2>/dev/null || echo 0; }
# The CPU ticks of every PostgreSQL server process on this machine, with
# those of the backends it has reaped (connections that ended): 0 when the
# server runs elsewhere.
pg_ticks() {
  local s=0 p
  for p in $(pgrep -x postgres 2>/dev/null); do
    s=$((s + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$s"
}
run() { # dsn script clients [length] -> "tps latency_ms failed transactions pgbench_cpu_seconds"
  # length is pgbench's -T SECS by default; -t 1 is one transaction per
  # client (what connecting costs). times (bash) after pgbench: the second
  # line is its children's user and system time, which is pgbench's.
  (PGPASSWORD=bench pgbench -n -M simple -f "$2" -c "$3" -j "$(($3 < 4 ? $3 : 4))" ${4:--T "$SECS"} "$1" 2>/dev/null; times) |
    awk '/latency average/ {lat=$4} /^tps/ {tps=$3} /number of failed/ {f=$5} /actually processed/ {split($6, a, "/"); n=a[1]}
      /^[0-9]+m[0-9.]+s [0-9]+m[0-9.]+s$/ {k++; if (k == 2) {split($1, u, "m"); split($2, y, "m"); cpu = u[1] * 60 + u[2] + y[1] * 60 + y[2]}}
      END {printf "%s %s %s %s %s\n", tps+0, lat+0, f+0, n+0, cpu+0}'
}
# us_per hz_ticks n: microseconds per answer of a tick count.
us_per() { awk -v d="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f", d * 1e6 / hz / n}'; }

# One table per workload: columns are targets, cells "tps / latency".
declare -A tps lat cpu pgcpu bcpu
targets=(direct)
[ -n "$bouncer" ] && targets+=(pgbouncer)
targets+=(proxy_fresh proxy_cached)
[ "$BIG" -gt 0 ] && targets+=(direct_big proxy_fresh_big)
dsn_of() { case $1 in direct|direct_big) echo "$direct" ;; pgbouncer) echo "$bouncer" ;; *) echo "$proxy" ;; esac; }
script_of() { case $1 in proxy_cached) echo "$work/cached.sql" ;; *_big) echo "$work/fresh_big.sql" ;; *) echo "$work/fresh.sql" ;; esac; }
psql "$proxy" -qXAtc "SELECT sex, COUNT(*) FROM $tiny WHERE age > 30 GROUP BY sex" >/dev/null

for c in "${CLIENTS[@]}"; do
  for r in $(seq 1 "$ROUNDS"); do
    # Rotate the order each round so no target always runs first.
    n=${#targets[@]}
    for i in $(seq 0 $((n - 1))); do
      t=${targets[$(((i + r) % n))]}
      # Connecting costs CPU that tps leaves out (pgbench starts the
      # clock once every client is connected) but CPU times do not:
      # SCRAM through ddp-proxy costs pgbench about 8 ms of CPU per
      # connection, trust (direct, PgBouncer) almost nothing, and every
      # slice starts a new PostgreSQL backend per client. A connect-only
      # run (one transaction per client) just before the slice measures
      # it: the per-answer figures below are (slice − connect-only) /
      # (answers − clients), the cost of an answer once connected.
      k0=$(proxy_ticks); h0=$(pg_ticks); e0=$(bouncer_ticks)
      read -r _ _ _ kn kc < <(run "$(dsn_of "$t")" "$(script_of "$t")" "$c" "-t 1")
      t0=$(proxy_ticks); g0=$(pg_ticks); b0=$(bouncer_ticks)
      read -r tp la fa nt pc < <(run "$(dsn_of "$t")" "$(script_of "$t")" "$c")
      t1=$(proxy_ticks); g1=$(pg_ticks); b1=$(bouncer_ticks)
      # The machine's CPU per answer by process: PostgreSQL, pgbench and
      # (through the proxy) the proxy. On a machine the clients share,
      # the throughput ratios follow from these sums.
      na=$((nt - kn))
      if [ "$na" -gt 0 ]; then
        pgcpu[$t.$c]="${pgcpu[$t.$c]:-} $(us_per $(((g1 - g0) - (g0 - h0))) "$na")"
        bcpu[$t.$c]="${bcpu[$t.$c]:-} $(awk -v s="$pc" -v k="$kc" -v n="$na" 'BEGIN {printf "%.0f", (s - k) * 1e6 / n}')"
      fi
      # Proxy CPU per answer (µs): what the answers cost the proxy,
      # whatever the machine's other load does to the latency.
      case $t in proxy_*) [ "$na" -gt 0 ] && cpu[$t.$c]="${cpu[$t.$c]:-} $(us_per $(((t1 - t0) - (t0 - k0))) "$na")" ;; esac
      [ "$t" = pgbouncer ] && [ "$na" -gt 0 ] && cpu[$t.$c]="${cpu[$t.$c]:-} $(us_per $(((b1 - b0) - (b0 - e0))) "$na")"
      [ "$fa" != 0 ] && echo "warning: $t at $c clients: $fa failed transactions" >&2
      tps[$t.$c]="${tps[$t.$c]:-} $tp"
      lat[$t.$c]="${lat[$t.$c]:-} $la"
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }

# table CELL: a row per client count, a column per target, each cell
# what CELL TARGET CLIENTS prints.
table() {
  local c t
  printf '%-8s' clients
  for t in "${targets[@]}"; do printf '%24s' "$t"; done
  printf '\n'
  for c in "${CLIENTS[@]}"; do
    printf '%-8s' "$c"
    for t in "${targets[@]}"; do printf '%24s' "$("$1" "$t" "$c")"; done
    printf '\n'
  done
}
tps_cell() { printf '%.0f / %.3f' "$(echo "${tps[$1.$2]}" | median)" "$(echo "${lat[$1.$2]}" | median)"; }
cpu_cell() { # PostgreSQL / pgbench / ddp-proxy or PgBouncer
  local px=- pg
  case $1 in proxy_* | pgbouncer) px=$(echo "${cpu[$1.$2]:-0}" | median) ;; esac
  pg=-
  # PostgreSQL's only when the server runs on this machine.
  pgrep -x postgres >/dev/null 2>&1 && pg=$(echo "${pgcpu[$1.$2]:-0}" | median)
  printf '%s / %s / %s' "$pg" "$(echo "${bcpu[$1.$2]:-0}" | median)" "$px"
}

printf '\nmedian of %s rounds of %ss per target and client count (tps, average latency ms)\n\n' "$ROUNDS" "$SECS"
table tps_cell

printf '\n%-8s %22s %22s %22s %22s\n' clients "fresh lat vs direct" "fresh tps vs direct" "fresh lat vs bouncer" "cached lat vs bouncer"
for c in "${CLIENTS[@]}"; do
  d_l=$(echo "${lat[direct.$c]}" | median); d_t=$(echo "${tps[direct.$c]}" | median)
  f_l=$(echo "${lat[proxy_fresh.$c]}" | median); f_t=$(echo "${tps[proxy_fresh.$c]}" | median)
  k_l=$(echo "${lat[proxy_cached.$c]}" | median)
  b_l=0; [ -n "$bouncer" ] && b_l=$(echo "${lat[pgbouncer.$c]}" | median)
  printf '%-8s %22s %22s %22s %22s\n' "$c" "$(ratio "$f_l" "$d_l")" "$(ratio "$f_t" "$d_t")" "$(ratio "$f_l" "$b_l")" "$(ratio "$k_l" "$b_l")"
done
if [ "$BIG" -gt 0 ]; then
  for c in "${CLIENTS[@]}"; do
    printf 'fresh on %s rows, %s clients: latency %s of direct\n' "$BIG" "$c" \
      "$(ratio "$(echo "${lat[proxy_fresh_big.$c]}" | median)" "$(echo "${lat[direct_big.$c]}" | median)")"
  done
fi
printf '\nproxy CPU per answer (µs, user + system, median of rounds)\n%-8s' clients
for t in "${targets[@]}"; do case $t in proxy_*) printf '%18s' "$t" ;; esac; done
printf '\n'
for c in "${CLIENTS[@]}"; do
  printf '%-8s' "$c"
  for t in "${targets[@]}"; do case $t in proxy_*) printf '%18s' "$(echo "${cpu[$t.$c]:-0}" | median)" ;; esac; done
  printf '\n'
done
printf '\nmachine CPU per answer by process (µs, user + system, median of rounds): PostgreSQL / pgbench / the proxy in between (ddp-proxy or PgBouncer)\n'
table cpu_cell
echo "targets: fresh lat vs direct ≤ 2.50x at 1 client; fresh tps vs direct ≥ 0.50x at 64 clients; cached lat vs bouncer ≤ 1.00x"

if [ "${DDP_BENCH_STRACE:-}" = 1 ] && command -v strace >/dev/null; then
  strace -c -f -e trace=fdatasync,fsync,pwrite64 -p "$proxy_pid" -o "$work/strace.txt" 2>/dev/null &
  strace_pid=$!
  sleep 0.5
  out=$(PGPASSWORD=bench pgbench -n -M simple -f "$work/fresh.sql" -c 1 -j 1 -T "$SECS" "$proxy" 2>/dev/null)
  kill -INT "$strace_pid"; wait "$strace_pid" 2>/dev/null || true
  n=$(echo "$out" | awk '/number of transactions actually processed/ {split($6, a, "/"); print a[1]}')
  printf '\nstrace, 1 client, %s fresh answers:\n' "$n"
  awk -v n="$n" '$NF ~ /^(fdatasync|fsync|pwrite64)$/ {printf "  %-10s %8d calls  %.2f per fresh answer\n", $NF, $4, $4 / n}' "$work/strace.txt"
fi
