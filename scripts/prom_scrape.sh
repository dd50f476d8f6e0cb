#!/usr/bin/env bash
# A real Prometheus server scraping a running crawl (issue 34): the
# synthetic site served on loopback with a latency per answer, so the
# crawl runs for some 20 s; ringcrawl crawls it with --status-addr;
# Prometheus (Debian's `prometheus`) scrapes its /metrics every second;
# then its HTTP API is asked, and the script checks that
#   - it scraped the crawl while it ran (at least MIN_RUNNING one-second
#     points of ringcrawl_finished at 0), and its pages only grew;
#   - sum(ringcrawl_pages_total) once ringcrawl_finished is 1 equals the
#     end report's urls (--report-json), and so does
#     sum(ringcrawl_shard_pages_total);
#   - the pages/s Prometheus computes (rate over 5 s) was above 0 while
#     the crawl ran.
#
#   scripts/prom_scrape.sh                   # build release, 20000 pages, 30 ms an answer
#   SKIP_BUILD=1 PAGES=5000 scripts/prom_scrape.sh
#
# Everything stays on 127.0.0.1; the ports are free ones the system picks
# (the site's and Prometheus's found by binding port 0, the status
# server's with --status-addr 127.0.0.1:0, read from its stderr). Bounded
# in time: the build by BUILD_LIMIT, the crawl by TIME_LIMIT, each wait by
# a deadline; on exit the script stops the processes it started, by PID,
# and removes its work directory (KEEP=1 keeps it).
#
# Environment (defaults): PAGES (20000), DELAY_MS (30), MAX_TASKS (32),
# MIN_RUNNING (10), TIME_LIMIT (300 s), BUILD_LIMIT (2400 s), BIN_DIR
# (${CARGO_TARGET_DIR:-target}/release), PROMETHEUS (prometheus on PATH),
# SKIP_BUILD (unset), KEEP (unset).
set -euo pipefail

cd "$(dirname "$0")/.."
PAGES=${PAGES:-20000}
DELAY_MS=${DELAY_MS:-30}
MAX_TASKS=${MAX_TASKS:-32}
MIN_RUNNING=${MIN_RUNNING:-10}
TIME_LIMIT=${TIME_LIMIT:-300}
BUILD_LIMIT=${BUILD_LIMIT:-2400}
BIN_DIR=${BIN_DIR:-${CARGO_TARGET_DIR:-target}/release}
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
[ -n "$PROMETHEUS" ] || { echo "prometheus is not installed (apt-get install prometheus)" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/prom_scrape.XXXXXX")
SITE_PID="" CRAWL_PID="" PROM_PID=""
stop() {
    # $1: a PID this script started. SIGTERM, a few seconds, then SIGKILL.
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
}
cleanup() {
    stop "$CRAWL_PID"
    stop "$PROM_PID"
    stop "$SITE_PID"
    if [ -n "${KEEP:-}" ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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
# `wait_for TIMEOUT_S COMMAND...`: run COMMAND until it succeeds, or fail.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "timed out waiting for: $*" >&2; return 1; }
        sleep 0.1
    done
}
# `query PROMQL [TIME]`: Prometheus's instant query, its result as JSON.
query() {
    curl -sf --max-time 10 "http://$PROM_ADDR/api/v1/query" \
        --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} |
        python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"]=="success", d; print(json.dumps(d["data"]["result"]))'
}
# The one value of an instant query's result (nothing if it is empty).
value() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["value"][1] if r else "")'; }

SITE_ADDR="127.0.0.1:$(free_port)"
echo "== site: $PAGES pages, ${DELAY_MS} ms an answer, on $SITE_ADDR"
"$SITE_BIN" --pages "$PAGES" --delay-ms "$DELAY_MS" --addr "$SITE_ADDR" >"$WORK/site.log" 2>&1 &
SITE_PID=$!
wait_for 30 curl -sf --max-time 2 -o /dev/null "http://$SITE_ADDR/"

# Prometheus first, its one target read from a file (file_sd) that is
# empty until the crawl says where its status server listens (no port is
# guessed): it scrapes the crawl within a few seconds of its start
# (Prometheus applies new targets at most every 5 s).
PROM_ADDR="127.0.0.1:$(free_port)"
echo '[]' >"$WORK/targets.json"
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ringcrawl
    file_sd_configs:
      - files: ["$WORK/targets.json"]
        refresh_interval: 1s
EOF
echo "== prometheus on $PROM_ADDR"
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="$PROM_ADDR" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
wait_for 60 curl -sf --max-time 2 -o /dev/null "http://$PROM_ADDR/-/ready"

echo "== crawl with --status-addr 127.0.0.1:0"
"$CRAWL_BIN" "http://$SITE_ADDR/" --no-sitemaps --max-tasks "$MAX_TASKS" --per-host "$MAX_TASKS" \
    --max-time "${TIME_LIMIT}s" --progress-interval 1h \
    --status-addr 127.0.0.1:0 --status-linger "${TIME_LIMIT}s" \
    --report-json "$WORK/report.json" -o "$WORK/records.jsonl" 2>"$WORK/crawl.err" &
CRAWL_PID=$!
START=$(date +%s)
status_addr() { sed -n 's|^status: serving http://\([^/]*\)/.*|\1|p' "$WORK/crawl.err" | grep -q .; }
wait_for 60 status_addr
STATUS_ADDR=$(sed -n 's|^status: serving http://\([^/]*\)/.*|\1|p' "$WORK/crawl.err" | head -1)
echo "[{\"targets\": [\"$STATUS_ADDR\"]}]" >"$WORK/targets.json.new"
mv "$WORK/targets.json.new" "$WORK/targets.json"
echo "   serving $STATUS_ADDR; Prometheus scrapes it every second"
scraped() { [ -n "$(query 'ringcrawl_elapsed_seconds' | value)" ]; }
wait_for 30 scraped

echo "== waiting for the crawl to end (at most ${TIME_LIMIT} s)"
report_written() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/report.json" 2>/dev/null; }
wait_for "$TIME_LIMIT" report_written
# The report is written before the linger: the numbers are final. Wait
# for a scrape that saw them.
finished() { [ "$(query 'ringcrawl_finished' | value)" = "1" ]; }
wait_for 30 finished
END=$(date +%s)

fail=0
check() { # check WHAT GOT WANT
    if [ "$2" = "$3" ]; then echo "   ok: $1 = $2"; else echo "   FAIL: $1 = $2, want $3"; fail=1; fi
}
URLS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["urls"])' "$WORK/report.json")
PAGES_TOTAL=$(query 'sum(ringcrawl_pages_total)' | value)
SHARD_TOTAL=$(query 'sum(ringcrawl_shard_pages_total)' | value)
echo "== Prometheus's numbers, the crawl ran for about $((END - START)) s under it"
check "sum(ringcrawl_pages_total)" "$PAGES_TOTAL" "$URLS"
check "sum(ringcrawl_shard_pages_total)" "$SHARD_TOTAL" "$URLS"

RUNNING=$(query 'count_over_time((ringcrawl_finished == 0)[1h:1s])' | value)
RUNNING=${RUNNING:-0}
if [ "$RUNNING" -ge "$MIN_RUNNING" ]; then
    echo "   ok: $RUNNING one-second points scraped while the crawl ran (at least $MIN_RUNNING)"
else
    echo "   FAIL: $RUNNING one-second points scraped while the crawl ran, want at least $MIN_RUNNING"; fail=1
fi
PEAK=$(query 'max_over_time(sum(rate(ringcrawl_pages_total[5s]))[1h:1s])' | value)
if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1] or 0) > 0 else 1)' "$PEAK"; then
    echo "   ok: Prometheus's pages/s (rate over 5 s) peaked at $PEAK"
else
    echo "   FAIL: Prometheus's pages/s never rose above 0 ($PEAK)"; fail=1
fi
# The pages over the crawl, a point a second: they only grow.
curl -sf --max-time 10 "http://$PROM_ADDR/api/v1/query_range" \
    --data-urlencode 'query=sum(ringcrawl_pages_total)' \
    --data-urlencode "start=$START" --data-urlencode "end=$((END + 1))" \
    --data-urlencode 'step=1' >"$WORK/pages.json"
python3 - "$WORK/pages.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "success", d
r = d["data"]["result"]
pages = [float(v) for _, v in r[0]["values"]] if r else []
grew = len(pages) > 1 and all(b >= a for a, b in zip(pages, pages[1:]))
print(f"   {'ok' if grew else 'FAIL'}: the pages only grew, over {len(pages)} points, {pages[0] if pages else '-'} to {pages[-1] if pages else '-'}")
sys.exit(0 if grew else 1)
PY

# End the linger (the crawl's exit code stays its own).
kill -INT "$CRAWL_PID" 2>/dev/null || true
code=0
wait "$CRAWL_PID" || code=$?
CRAWL_PID=""
check "the crawl's exit code" "$code" 0
if [ "$fail" != 0 ]; then
    echo "prom_scrape: FAILED (logs in $WORK with KEEP=1)"
    exit 1
fi
echo "prom_scrape: ok"
