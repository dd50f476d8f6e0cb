#!/usr/bin/env bash
# The status server's cost (issue 34): pages/s of the demo crawl without
# --status-addr, and with it and a client scraping /metrics every second
# (as Prometheus would, and faster: POLL, default 1 s), runs interleaved.
# BASELINE=/path/to/ringcrawl crawls the runs without the server with
# another build (e.g. main's, from before the status server).
#
#   scripts/status_bench.sh                 # PAGES=50000 RUNS=5 POLL=1
#   PAGES=20000 RUNS=3 POLL=0.1 scripts/status_bench.sh
#
# Both crawls print the same (the report; no progress line): only the
# status server differs. Prints each run's urls/s (from --report-json)
# and the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES=${PAGES:-50000}
RUNS=${RUNS:-5}
POLL=${POLL:-1}
BIN=${BIN:-target/release/ringcrawl}
BASE=${BASELINE:-$BIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rate() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["urls_per_s"])' "$1"; }

without=() with=()
for i in $(seq "$RUNS"); do
    "$BASE" --demo "$PAGES" --progress-interval 1h --report-json "$tmp/a.json" 2>/dev/null || true
    without+=("$(rate "$tmp/a.json")")

    # The file exists before the crawl's shell opens it: the loop below
    # may read it first.
    : >"$tmp/err"
    "$BIN" --demo "$PAGES" --progress-interval 1h --status-addr 127.0.0.1:0 \
        --report-json "$tmp/b.json" 2>"$tmp/err" &
    pid=$!
    addr=
    while [ -z "$addr" ] && kill -0 "$pid" 2>/dev/null; do
        addr=$(sed -n 's|^status: serving http://\([^/]*\)/.*|\1|p' "$tmp/err")
        sleep 0.01
    done
    scrapes=0
    while kill -0 "$pid" 2>/dev/null; do
        curl -s -o /dev/null "http://$addr/metrics" && scrapes=$((scrapes + 1)) || true
        sleep "$POLL"
    done
    wait "$pid" || true
    with+=("$(rate "$tmp/b.json")")
    echo "run $i: without ${without[-1]} urls/s, with ${with[-1]} urls/s ($scrapes scrapes)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median: without $(median "${without[@]}") urls/s, with --status-addr and a scrape every ${POLL}s $(median "${with[@]}") urls/s"
