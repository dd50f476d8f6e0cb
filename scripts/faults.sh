#!/usr/bin/env bash
# Faults, long: the suite's kill test (cli/tests/suite/faults.rs) with more
# kills, round after round, each with a seed of its own.
#
#   scripts/faults.sh                     # 3 rounds of 20 kills
#   KILLS=50 ROUNDS=1 scripts/faults.sh
#   SEED=123 ROUNDS=1 scripts/faults.sh   # rerun one round (its seed is printed)
#
# Each round: one crawl of the synthetic site (8 hosts, at least 120,000
# pages, 10 ms a page) with --state --warc --cdxj --wacz, --seen-memory 2M
# (the seen-sets merge to disk) and --frontier-memory 256K (queues spill),
# SIGKILLed KILLS times at random instants (0.15-0.65 s into each run),
# resumed each time, then resumed to its end. Checked against the site's
# own count of requests: every page has exactly one record; no page whose
# record was on disk at a kill is fetched again; every logged page is in a
# WARC file and warcio checks them; every CDXJ line's bytes lie inside its
# WARC file at a record of its URL, no URL twice; `wacz validate` passes;
# pywb replays a sample of pages as the site serves them; a seen-set
# merged to disk in some run. The test itself is the check (one code path
# for the suite and this script); warcio, py-wacz and pywb come from PyPI
# into venvs under the target directory, and a round fails, not skips,
# if they cannot be had.
#
# Bounded: the build by BUILD_LIMIT, each round by ROUND_LIMIT (the test
# process is then killed, with the crawls it started: each crawl is also
# bounded by the test's own 120 s limit). Only processes this script
# starts are stopped. Traffic stays on 127.0.0.1.
#
# Environment (defaults): KILLS (20), ROUNDS (3), SEED (each round's from
# the clock), BUILD_LIMIT (1800 s), ROUND_LIMIT (900 s), SKIP_BUILD (unset).
set -euo pipefail

cd "$(dirname "$0")/.."
KILLS=${KILLS:-20}
ROUNDS=${ROUNDS:-3}
BUILD_LIMIT=${BUILD_LIMIT:-1800}
ROUND_LIMIT=${ROUND_LIMIT:-900}
TEST=faults::a_crawl_killed_at_random_instants

if [ -z "${SKIP_BUILD:-}" ]; then
    echo "== building the suite (release)"
    timeout "$BUILD_LIMIT" cargo test --release -p ringcrawl-cli --test suite --no-run --quiet
fi

LOG=$(mktemp "${TMPDIR:-/tmp}/faults.XXXXXX")
trap 'rm -f "$LOG"' EXIT
failed=0
for round in $(seq "$ROUNDS"); do
    seed=${SEED:-$(( $(date +%s%N) % 1000000007 ))}
    echo "== round $round of $ROUNDS: $KILLS kills, RESUME_SEED=$seed"
    start=$(date +%s)
    set +e
    # timeout kills its whole process group: cargo, the test, the crawls
    # and the servers the test started.
    RINGCRAWL_FAULT_KILLS=$KILLS RESUME_SEED=$seed RINGCRAWL_REQUIRE_WARCIO=1 \
        timeout -s KILL "$ROUND_LIMIT" \
        cargo test --release -p ringcrawl-cli --test suite --quiet -- "$TEST" --nocapture \
        >"$LOG" 2>&1
    status=$?
    set -e
    # A filter that matches no test passes: not here.
    [ "$status" -ne 0 ] || grep -q 'test result: ok. 1 passed' "$LOG" || status=1
    grep -E 'records after each kill|fetches repeated|pages indexed|each indexed once|pywb replayed|test result|SKIPPED' "$LOG" || true
    if [ "$status" -ne 0 ]; then
        failed=$((failed + 1))
        tail -n 40 "$LOG"
    fi
    echo "   round $round: exit $status after $(( $(date +%s) - start )) s"
done
echo "== $failed of $ROUNDS rounds failed"
[ "$failed" -eq 0 ]
