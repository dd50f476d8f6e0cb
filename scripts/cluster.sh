#!/usr/bin/env bash
# Cluster: crawl one site with 1, 2 and 3 ringcrawl nodes on one Redis, and
# report what a node adds, what each page costs Redis, and Redis's memory.
#
#   scripts/cluster.sh                   # build, ROUNDS rounds of 1/2/3 nodes, then BIG pages on 3
#   ROUNDS=1 PAGES=6000 BIG=0 SKIP_BUILD=1 scripts/cluster.sh    # a quick look
#
# The site: ringcrawl-site --pages PAGES --hosts HOSTS --delay-ms DELAY_MS on
# 127.0.0.1 (a free port, SITE_THREADS executors), every answer DELAY_MS
# late, so that a node's fetch slots, not the machine's two cores, bound its
# speed: what a node adds is what a node on its own machine would add. A
# fresh site and a fresh crawl (FLUSHALL) for every run.
#
# The nodes: ringcrawl --cluster redis://127.0.0.1:PORT/ --crawl bench
#   --node nK --cores 1 --max-tasks TASKS --ignore-robots --no-sitemaps -q
#   -o WORK/records.jsonl --resolve ... (node 1 also gets the roots)
# each pinned to one CPU (taskset, node k on CPU k mod CPUs). They crawl
# until the crawl is over (every stream drained) and exit.
#
# Per run: pages recorded (all nodes), wall time from the first node's
# start to the last node's exit, aggregate pages/s, Redis commands per page
# (INFO's total_commands_processed: commands the clients sent; a pipeline
# counts each of its commands, a script one) and Redis CPU per page (INFO's
# used_cpu_user + used_cpu_sys), checked: every URL of the site (its --list)
# recorded exactly once over the nodes' logs. Rounds alternate the order of
# the node counts; the summary gives medians and ranges, and each count's
# pages/s as a ratio to one node's.
#
# BIG (1000000; 0 to skip): one crawl of a BIG-page site (no delay, HOSTS_BIG
# hosts) by 3 nodes, with Redis's peak memory (used_memory_peak) and RSS.
#
# Environment (defaults): ROUNDS (5), PAGES (30000), HOSTS (512), DELAY_MS
# (50), TASKS (64), SITE_THREADS (2), BIG (1000000), HOSTS_BIG (4096),
# TIME_LIMIT (1200 s a crawl), BIN_DIR, SKIP_BUILD, KEEP (keep the work
# directory). Needs redis-server and redis-cli (Debian's redis-server) and
# taskset.
set -euo pipefail
shopt -s inherit_errexit

cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
PAGES=${PAGES:-30000}
HOSTS=${HOSTS:-512}
DELAY_MS=${DELAY_MS:-50}
TASKS=${TASKS:-64}
SITE_THREADS=${SITE_THREADS:-2}
BIG=${BIG:-1000000}
HOSTS_BIG=${HOSTS_BIG:-4096}
TIME_LIMIT=${TIME_LIMIT:-1200}
BIN_DIR=${BIN_DIR:-${CARGO_TARGET_DIR:-target}/release}
REDIS_BIN=$(command -v redis-server || echo /usr/bin/redis-server)
[ -x "$REDIS_BIN" ] && command -v redis-cli >/dev/null ||
    { echo "redis-server and redis-cli are needed (apt-get install redis-server)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "taskset is needed (util-linux)" >&2; exit 1; }
CPUS=$(nproc)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cluster.XXXXXX")
PIDS=()
REDIS_PID=""
SITE_PID=""
cleanup() {
    # Only the processes this script started, by PID.
    for pid in "${PIDS[@]}" "$SITE_PID" "$REDIS_PID"; do
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    done
    if [ -n "${KEEP:-}" ] || [ -e "$WORK/keep" ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${SKIP_BUILD:-}" ]; then
    echo "== building (release)"
    cargo build --release --workspace --bins --quiet
fi
SITE_BIN="$BIN_DIR/ringcrawl-site"
CRAWL_BIN="$BIN_DIR/ringcrawl"
[ -x "$SITE_BIN" ] && [ -x "$CRAWL_BIN" ] || { echo "no binaries in $BIN_DIR" >&2; exit 1; }
HARD_NOFILE=$(ulimit -Hn)
[ "$HARD_NOFILE" = unlimited ] && HARD_NOFILE=1048576
ulimit -n "$HARD_NOFILE"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
REDIS_PORT=$(free_port)
"$REDIS_BIN" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$WORK" --daemonize no >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
REDIS_URL="redis://127.0.0.1:$REDIS_PORT/"
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }
for _ in $(seq 50); do rcli PING 2>/dev/null | grep -q PONG && break; sleep 0.1; done
# info SECTION KEY: one number from INFO.
info() { rcli INFO "$1" | tr -d '\r' | sed -n "s/^$2://p"; }

COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "== commit $COMMIT, $CPUS CPUs; redis $("$REDIS_BIN" --version | sed 's/.*v=\([^ ]*\).*/\1/') on :$REDIS_PORT"

# run NODES PAGES HOSTS DELAY: one crawl; prints one result line
# "nodes pages secs pages/s cmds/page cpu_us/page peak_mem_bytes rss_bytes".
run() {
    local nodes=$1 pages=$2 hosts=$3 delay=$4
    local dir="$WORK/run-$nodes-$pages-$RANDOM"
    mkdir -p "$dir"
    rcli FLUSHALL >/dev/null
    rcli CONFIG RESETSTAT >/dev/null
    "$SITE_BIN" --pages "$pages" --hosts "$hosts" --delay-ms "$delay" --threads "$SITE_THREADS" \
        --addr 127.0.0.1:0 2>"$dir/site.log" &
    SITE_PID=$!
    local port=""
    for _ in $(seq 100); do
        port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$dir/site.log")
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$dir/site.log" >&2; echo "the site did not start" >&2; exit 1; }
    local site_args=(--pages "$pages" --hosts "$hosts" --addr "127.0.0.1:$port")
    mapfile -t roots < <("$SITE_BIN" "${site_args[@]}" --roots)
    "$SITE_BIN" "${site_args[@]}" --list >"$dir/expected"
    local resolve=()
    for k in $(seq 0 $((hosts - 1))); do resolve+=(--resolve "h$k.site.test:$port:127.0.0.1"); done
    [ "$hosts" -eq 1 ] && resolve=()
    local cpu0 start end
    cpu0=$(python3 -c "print($(info cpu used_cpu_user) + $(info cpu used_cpu_sys))")
    start=$(date +%s.%N)
    PIDS=()
    for k in $(seq 1 "$nodes"); do
        local mine=()
        [ "$k" -eq 1 ] && mine=("${roots[@]}")
        timeout -s KILL "$TIME_LIMIT" taskset -c $(((k - 1) % CPUS)) "$CRAWL_BIN" \
            --cluster "$REDIS_URL" --crawl bench --node "n$k" --cores 1 --max-tasks "$TASKS" \
            --ignore-robots --no-sitemaps -q -o "$dir/records.jsonl" \
            "${resolve[@]}" "${mine[@]}" 2>"$dir/n$k.log" &
        PIDS+=($!)
    done
    local failed=0
    for pid in "${PIDS[@]}"; do wait "$pid" || failed=1; done
    end=$(date +%s.%N)
    PIDS=()
    kill -TERM "$SITE_PID" 2>/dev/null || true
    wait "$SITE_PID" 2>/dev/null || true
    SITE_PID=""
    if [ "$failed" -ne 0 ]; then
        tail -n 3 "$dir"/n*.log >&2
        echo "a node failed ($nodes nodes, $pages pages)" >&2
        exit 1
    fi
    local cmds cpu1 mem rss
    cmds=$(info stats total_commands_processed)
    cpu1=$(python3 -c "print($(info cpu used_cpu_user) + $(info cpu used_cpu_sys))")
    mem=$(info memory used_memory_peak)
    rss=$(info memory used_memory_rss)
    if ! python3 - "$dir" "$nodes" "$start" "$end" "$cmds" "$cpu0" "$cpu1" "$mem" "$rss" <<'EOF'
import collections, glob, json, sys
d, nodes, start, end, cmds, cpu0, cpu1, mem, rss = sys.argv[1:]
expected = set(open(f"{d}/expected").read().split())
counts = collections.Counter()
for log in glob.glob(f"{d}/records.*.jsonl"):
    for line in open(log):
        counts[json.loads(line)["url"]] += 1
missing = expected - counts.keys()
extra = counts.keys() - expected
twice = sum(n - 1 for n in counts.values())
if missing or extra or twice:
    sys.exit(f"{len(missing)} URLs missing, {len(extra)} unexpected, {twice} recorded twice")
pages = sum(counts.values())
secs = float(end) - float(start)
print(nodes, pages, f"{secs:.2f}", f"{pages / secs:.0f}", f"{int(cmds) / pages:.2f}",
      f"{(float(cpu1) - float(cpu0)) / pages * 1e6:.1f}", mem, rss)
EOF
    then
        echo "the crawl by $nodes nodes is incomplete (work directory kept: $dir)" >&2
        touch "$WORK/keep"
        exit 1
    fi
    rm -rf "$dir"
}

echo "== $ROUNDS rounds of 1, 2 and 3 nodes: $PAGES pages over $HOSTS hosts, ${DELAY_MS} ms a page, $TASKS fetches a node"
echo "nodes pages secs pages/s cmds/page redis_cpu_us/page redis_peak_bytes redis_rss_bytes"
: >"$WORK/results"
orders=("1 2 3" "3 2 1" "2 3 1" "1 3 2" "3 1 2" "2 1 3")
for r in $(seq 1 "$ROUNDS"); do
    for n in ${orders[$(((r - 1) % 6))]}; do
        line=$(run "$n" "$PAGES" "$HOSTS" "$DELAY_MS")
        echo "$line" | tee -a "$WORK/results"
    done
done
[ "$ROUNDS" -gt 0 ] && python3 - "$WORK/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault(int(r[0]), []).append(r)
def med(rs, i):
    return statistics.median(float(r[i]) for r in rs)
base = med(by[1], 3) if 1 in by else None
print("\n| nodes | pages/s median (range) | vs 1 node | Redis commands/page | Redis CPU µs/page |")
print("|---:|---:|---:|---:|---:|")
for n in sorted(by):
    rs = by[n]
    rates = [float(r[3]) for r in rs]
    ratio = f"{med(rs, 3) / base:.2f}x" if base else "-"
    print(f"| {n} | {med(rs, 3):,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) | {ratio} "
          f"| {med(rs, 4):.2f} | {med(rs, 5):.1f} |")
EOF

if [ "$BIG" -gt 0 ]; then
    echo "== $BIG pages over $HOSTS_BIG hosts, no delay, 3 nodes"
    line=$(run 3 "$BIG" "$HOSTS_BIG" 0)
    echo "$line"
    read -r _ pages secs rate cmds cpu mem rss <<<"$line"
    echo "$BIG pages by 3 nodes: $pages records in ${secs}s ($rate pages/s), $cmds Redis commands a page," \
        "$cpu µs of Redis CPU a page, Redis peak memory $((mem / 1048576)) MiB (RSS at the end $((rss / 1048576)) MiB)"
fi
