#!/usr/bin/env bash
# scripts/wire.sh — ringcrawl against the wire: its pages/s over `wrk`'s
# keep-alive requests/s on the same nginx, the same URL list and the same
# 100 connections, plain HTTP, HTTPS and gzip-served pages.
#
#   scripts/wire.sh [RESULTS.md]            # default: wire-results.md
#   RUNS=7 BASELINE=/tmp/old/ringcrawl scripts/wire.sh /tmp/wire.md
#
# A mode of scripts/bench.sh (read it for what each run does and the
# columns): TOOLS="ringcrawl wire", no `Connection: close` runs, no
# --cores/pinned groups, RUNS rounds (default 5) alternating ringcrawl and
# wrk. The report's line "ringcrawl ÷ wire keep-alive, paired by round"
# (and "ringcrawl https ÷ wire https keep-alive") is the issue's ratio:
# each crawl against the wrk run of its own round, median and min–max, with
# CPU µs per page. A crawl of the 20,000-page site lasts well under a
# second: its start and its last pages count in its rate, wrk's 10 s run is
# all steady state; PAGES= makes the site larger.
# Every variable of bench.sh can be set; these are only the defaults.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TOOLS=${TOOLS:-"ringcrawl wire"}
export CLOSE=${CLOSE:-0}
export CORES=${CORES-}
export PIN=${PIN:-0}
export REQUISITES=${REQUISITES:-0}
export HTTPS=${HTTPS:-1}
export GZIP=${GZIP:-1}
export RUNS=${RUNS:-5}
exec "$HERE/bench.sh" "${1:-wire-results.md}"
