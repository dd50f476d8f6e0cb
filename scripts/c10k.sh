#!/usr/bin/env bash
# C10K: thousands of concurrent fetches against a slow, many-host local site.
#
#   scripts/c10k.sh                         # build release, run 10000 then 18000 tasks
#   RUNS="10000" SKIP_BUILD=1 BIN_DIR=/path/to/release scripts/c10k.sh
#
# The site: ringcrawl-site --pages 100000 --hosts 100 --delay-ms 1000, so
# every response waits 1 s and a crawler needs ~N connections open to fetch
# ~N pages/s. It listens on ADDRS loopback addresses (127.0.0.1 ..
# 127.0.0.ADDRS, one port) with THREADS executors, and host h{k}.site.test is
# pinned with --resolve to 127.0.0.(1 + k % ADDRS), so the connections are
# spread over several server ip:port pairs (each pair has its own ~28K
# ephemeral ports and its own listen backlog). The crawl starts from all 100
# roots (strict scope):
#   ringcrawl --max-tasks N --cores 2 --per-host P --no-sitemaps -q -o FILE --resolve ... ROOTS
# Every 0.5 s it samples: the crawler's established TCP connections to the
# site (ss, client side), its SYN-SENT sockets, its open socket fds, its
# VmRSS, and the records written so far. The report per run: peak concurrent
# connections, pages/s (whole run and best 5 s), peak RSS and RSS per open
# connection above the idle baseline, error counts by kind, URLs missing or
# unexpected against ringcrawl-site --list, and kernel listen-queue drops.
#
# RUNS lists the --max-tasks values (default "10000 18000": the second is the
# push past the first). The fd limit is raised to the hard limit first (both
# processes need one fd per connection). Each run is bounded by TIME_LIMIT
# seconds (default 600; the crawl is then killed and reported as such); the
# site is stopped after each run and on exit. Traffic stays on 127.0.0.0/8.
#
# Environment (defaults): RUNS ("10000 18000"), PAGES (100000), HOSTS (100),
# DELAY_MS (1000), ADDRS (4), THREADS (2), PER_HOST (2 * tasks / hosts, so
# the per-core task limit binds, not the per-host one), TIME_LIMIT (600),
# BUILD_LIMIT (1200), BIN_DIR (${CARGO_TARGET_DIR:-target}/release),
# SKIP_BUILD, KEEP (keep the work directory), EXTRA_ARGS (more crawler flags).
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-"10000 18000"}
PAGES=${PAGES:-100000}
HOSTS=${HOSTS:-100}
DELAY_MS=${DELAY_MS:-1000}
ADDRS=${ADDRS:-4}
THREADS=${THREADS:-2}
TIME_LIMIT=${TIME_LIMIT:-600}
BUILD_LIMIT=${BUILD_LIMIT:-1200}
BIN_DIR=${BIN_DIR:-${CARGO_TARGET_DIR:-target}/release}
EXTRA_ARGS=${EXTRA_ARGS:-}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/c10k.XXXXXX")
SITE_PID=""
CRAWL_PID=""
stop_site() {
    if [ -n "$SITE_PID" ]; then
        kill "$SITE_PID" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$SITE_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SITE_PID" 2>/dev/null || true
        wait "$SITE_PID" 2>/dev/null || true
        SITE_PID=""
    fi
}
cleanup() {
    # Only the processes this script started, by PID.
    [ -n "$CRAWL_PID" ] && kill -9 "$CRAWL_PID" 2>/dev/null || true
    stop_site
    if [ -n "${KEEP:-}" ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

HARD_NOFILE=$(ulimit -Hn)
[ "$HARD_NOFILE" = unlimited ] && HARD_NOFILE=1048576
ulimit -n "$HARD_NOFILE"
echo "== fd limit $(ulimit -n), memlock $(ulimit -l) KiB, ephemeral ports $(tr '\t' - </proc/sys/net/ipv4/ip_local_port_range), somaxconn $(cat /proc/sys/net/core/somaxconn), $(nproc) CPUs"

if [ -z "${SKIP_BUILD:-}" ]; then
    echo "== building (release)"
    timeout "$BUILD_LIMIT" cargo build --release --workspace --bins --quiet
fi
SITE_BIN="$BIN_DIR/ringcrawl-site"
CRAWL_BIN="$BIN_DIR/ringcrawl"
[ -x "$SITE_BIN" ] && [ -x "$CRAWL_BIN" ] || { echo "no binaries in $BIN_DIR" >&2; exit 1; }

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

run() {
    local tasks=$1 dir="$WORK/run-$1"
    mkdir -p "$dir"
    local port
    port=$(free_port)
    local per_host=${PER_HOST:-$(( (2 * tasks + HOSTS - 1) / HOSTS ))}
    local site_args=(--pages "$PAGES" --hosts "$HOSTS" --delay-ms "$DELAY_MS" --threads "$THREADS")
    local a
    for a in $(seq 1 "$ADDRS"); do site_args+=(--addr "127.0.0.$a:$port"); done
    timeout 120 "$SITE_BIN" "${site_args[@]}" --list >"$dir/expected.txt"
    local roots=() resolve=() k
    mapfile -t roots < <(timeout 60 "$SITE_BIN" "${site_args[@]}" --roots)
    for k in $(seq 0 $((HOSTS - 1))); do
        resolve+=(--resolve "h$k.site.test:$port:127.0.0.$((1 + k % ADDRS))")
    done

    echo
    echo "== run: --max-tasks $tasks (per host $per_host), site on port $port x $ADDRS addresses, $THREADS threads, $(wc -l <"$dir/expected.txt") expected URLs"
    "$SITE_BIN" "${site_args[@]}" 2>"$dir/site.err" &
    SITE_PID=$!
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
        kill -0 "$SITE_PID" 2>/dev/null || { cat "$dir/site.err" >&2; return 1; }
        sleep 0.1
    done
    nstat -az TcpExtListenOverflows TcpExtListenDrops TcpExtTCPTimeWaitOverflow >"$dir/nstat.before" 2>/dev/null || true

    # shellcheck disable=SC2206
    # --no-sitemaps: the site has none; every URL recorded is one it lists.
    local crawl_args=(--max-tasks "$tasks" --cores 2 --per-host "$per_host" --no-sitemaps -q -o "$dir/records.jsonl"
        "${resolve[@]}" $EXTRA_ARGS "${roots[@]}")
    local start now
    start=$(date +%s.%N)
    "$CRAWL_BIN" "${crawl_args[@]}" 2>"$dir/crawl.err" &
    CRAWL_PID=$!
    local timed_out=0
    echo "t rss_kb established syn_sent sockets records crawl_ticks site_ticks site_rss_kb" >"$dir/samples.txt"
    while kill -0 "$CRAWL_PID" 2>/dev/null; do
        now=$(date +%s.%N)
        local rss est syn socks recs
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$CRAWL_PID/status" 2>/dev/null || echo 0)
        est=$(ss -Htn state established "( dport = :$port )" 2>/dev/null | wc -l)
        syn=$(ss -Htn state syn-sent "( dport = :$port )" 2>/dev/null | wc -l)
        socks=$(find "/proc/$CRAWL_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l)
        recs=$(wc -l <"$dir/records.jsonl" 2>/dev/null || echo 0)
        local cticks sticks srss
        cticks=$(awk '{print $14 + $15}' "/proc/$CRAWL_PID/stat" 2>/dev/null || echo 0)
        sticks=$(awk '{print $14 + $15}' "/proc/$SITE_PID/stat" 2>/dev/null || echo 0)
        srss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SITE_PID/status" 2>/dev/null || echo 0)
        echo "$(awk -v n="$now" -v s="$start" 'BEGIN {printf "%.2f", n - s}') ${rss:-0} $est $syn $socks $recs ${cticks:-0} ${sticks:-0} ${srss:-0}" >>"$dir/samples.txt"
        if awk -v n="$now" -v s="$start" -v l="$TIME_LIMIT" 'BEGIN {exit !(n - s > l)}'; then
            echo "!! crawl still running after ${TIME_LIMIT}s: killing it" >&2
            kill -9 "$CRAWL_PID" 2>/dev/null || true
            timed_out=1
            break
        fi
        sleep 0.5
    done
    local rc=0
    wait "$CRAWL_PID" || rc=$?
    CRAWL_PID=""
    local end
    end=$(date +%s.%N)
    nstat -az TcpExtListenOverflows TcpExtListenDrops TcpExtTCPTimeWaitOverflow >"$dir/nstat.after" 2>/dev/null || true
    stop_site

    python3 - "$dir" "$tasks" "$rc" "$timed_out" "$start" "$end" "$(getconf CLK_TCK)" <<'PY' | tee "$dir/summary.txt"
import json, statistics, sys
from collections import Counter

d, tasks, rc, timed_out, start, end, hz = sys.argv[1:8]
hz = float(hz)
elapsed = float(end) - float(start)
rows = [l.split() for l in open(f"{d}/samples.txt").read().splitlines()[1:]]
t = [float(r[0]) for r in rows]
rss = [int(r[1]) / 1024 for r in rows]
est = [int(r[2]) for r in rows]
syn = [int(r[3]) for r in rows]
socks = [int(r[4]) for r in rows]
recs = [int(r[5]) for r in rows]
cticks = [int(r[6]) for r in rows]
sticks = [int(r[7]) for r in rows]
srss = [int(r[8]) / 1024 for r in rows]

kinds, statuses, n, urls = Counter(), Counter(), 0, set()
for line in open(f"{d}/records.jsonl"):
    try:
        r = json.loads(line)
    except ValueError:
        kinds["(unparsable line)"] += 1
        continue
    n += 1
    urls.add(r["url"])
    statuses[r.get("status")] += 1
    if r.get("error_kind"):
        kinds[r["error_kind"]] += 1
expected = set(open(f"{d}/expected.txt").read().split())

def nstat(name):
    out = {}
    try:
        for line in open(f"{d}/nstat.{name}"):
            p = line.split()
            if len(p) >= 2 and p[0].startswith("TcpExt"):
                out[p[0]] = int(p[1])
    except FileNotFoundError:
        pass
    return out
before, after = nstat("before"), nstat("after")

best = 0.0
window = min(5.0, (t[-1] - t[0]) if len(t) > 1 else 0.0)
for i in range(len(t)):
    j = i
    while j < len(t) and t[j] - t[i] < window:
        j += 1
    if j < len(t) and t[j] > t[i]:
        best = max(best, (recs[j] - recs[i]) / (t[j] - t[i]))
peak_c = max(est, default=0)
peak_rss = max(rss, default=0)
at_peak = rss[est.index(peak_c)] if est else 0
# Marginal RSS per connection: least-squares slope of RSS over established
# connections while the crawl ramps up (memory is not handed back after).
ramp = [(e, r) for e, r in zip(est, rss)][: rss.index(peak_rss) + 1 if rss else 0]
slope = float("nan")
if len({e for e, _ in ramp}) >= 2:
    me = statistics.mean(e for e, _ in ramp)
    mr = statistics.mean(r for _, r in ramp)
    var = sum((e - me) ** 2 for e, _ in ramp)
    slope = sum((e - me) * (r - mr) for e, r in ramp) / var * 1024 if var else slope
# CPU: share of one core used by each process while connections were open.
busy = [i for i, e in enumerate(est) if e > 0]
def cpu(ticks):
    if len(busy) < 2 or t[busy[-1]] <= t[busy[0]]:
        return float("nan")
    return (ticks[busy[-1]] - ticks[busy[0]]) / hz / (t[busy[-1]] - t[busy[0]]) * 100
print(f"-- --max-tasks {tasks}: exit {rc}{' (KILLED at the time limit)' if timed_out == '1' else ''}, {elapsed:.1f} s")
print(f"   records {n} ({n / max(elapsed, 1e-9):.0f} pages/s over the run, best {window:.0f} s {best:.0f}/s); "
      f"expected {len(expected)}: missing {len(expected - urls)}, unexpected {len(urls - expected)}, "
      f"duplicate records {n - len(urls)}")
print(f"   peak established connections {peak_c} (median while > 0: "
      f"{statistics.median([e for e in est if e] or [0]):.0f}); peak SYN-SENT {max(syn, default=0)}; "
      f"peak socket fds {max(socks, default=0)}")
print(f"   crawler RSS: peak {peak_rss:.1f} MiB, {at_peak:.1f} MiB at peak connections "
      f"({at_peak * 1024 / max(peak_c, 1):.1f} KiB per connection); marginal {slope:.1f} KiB per connection "
      f"(fit over the ramp-up); at the end {rss[-1] if rss else 0:.1f} MiB; site RSS peak {max(srss, default=0):.1f} MiB")
print(f"   CPU while connections were open (100% = one core): crawler {cpu(cticks):.0f}%, site {cpu(sticks):.0f}%")
print("   statuses: " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
print("   errors by kind: " + (", ".join(f"{k} {v}" for k, v in kinds.most_common()) or "none"))
print("   kernel: " + ", ".join(f"{k[6:]} +{after.get(k, 0) - before.get(k, 0)}" for k in sorted(after)))
PY
    echo "   crawler stderr (tail):"
    tail -n 5 "$dir/crawl.err" | sed 's/^/     /'
}

for tasks in $RUNS; do
    run "$tasks" || echo "!! run with --max-tasks $tasks failed to start"
done
