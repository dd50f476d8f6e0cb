#!/usr/bin/env bash
# Soak test: crawl a synthetic site where a fifth of the pages misbehave, and
# check that every URL ends up with exactly one record of the right kind and
# that the crawler's memory stays flat.
#
#   scripts/soak.sh                      # build release, 5000 pages, 20% faults
#   PAGES=20000 FAULTS=30 scripts/soak.sh
#   SKIP_BUILD=1 BIN_DIR=/path/to/release scripts/soak.sh
#
# Steps: build (cargo build --release), list the good and faulty URLs
# (ringcrawl-site --list-good / --list-faults), serve the site on
# 127.0.0.1:PORT, crawl it with
#   ringcrawl --cores 2 --timeout 2 --read-timeout 1 --max-tries 2 --no-sitemaps -o FILE
# while sampling the crawler's VmRSS every 0.5 s, then check:
#   - every good URL: exactly one record, status 2xx/3xx, no error;
#   - every faulty URL: exactly one record, an error or a status outside 2xx;
#   - no record for any other URL;
#   - RSS: max <= 2 x the median of the second half of the run, and
#     max <= MAX_RSS_MB.
# It prints a summary (with the outcome of each fault kind, and outcomes that
# differ from what the fault should produce as warnings) and exits non-zero
# on any violation. Everything is bounded: the build by BUILD_LIMIT, the
# crawl by TIME_LIMIT (then it is killed and the run fails); the site server
# is stopped on exit. Traffic stays on 127.0.0.1.
#
# Environment (defaults): PAGES (5000), FAULTS (20), SEED (1),
# MAX_TASKS (100), PER_HOST (32; the whole site is one host, and the crawler's
# default of 2 makes a faulty site crawl slowly), TIME_LIMIT (600 s),
# BUILD_LIMIT (1200 s), MAX_RSS_MB (1024), PORT (a free one), BIN_DIR
# (${CARGO_TARGET_DIR:-target}/release), SKIP_BUILD (unset), KEEP (unset:
# keep the work directory), STRICT_KINDS (unset: unexpected outcomes per
# fault kind fail the run too), EXTRA_ARGS (more crawler flags).
set -euo pipefail

cd "$(dirname "$0")/.."
PAGES=${PAGES:-5000}
FAULTS=${FAULTS:-20}
SEED=${SEED:-1}
MAX_TASKS=${MAX_TASKS:-100}
PER_HOST=${PER_HOST:-32}
TIME_LIMIT=${TIME_LIMIT:-600}
BUILD_LIMIT=${BUILD_LIMIT:-1200}
MAX_RSS_MB=${MAX_RSS_MB:-1024}
BIN_DIR=${BIN_DIR:-${CARGO_TARGET_DIR:-target}/release}
EXTRA_ARGS=${EXTRA_ARGS:-}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
SITE_PID=""
CRAWL_PID=""
cleanup() {
    # Only the processes this script started, by PID.
    [ -n "$CRAWL_PID" ] && kill -9 "$CRAWL_PID" 2>/dev/null || true
    if [ -n "$SITE_PID" ]; then
        kill "$SITE_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SITE_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SITE_PID" 2>/dev/null || true
    fi
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

if [ -z "${PORT:-}" ]; then
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
fi
ADDR="127.0.0.1:$PORT"
SITE_ARGS=(--pages "$PAGES" --faults "$FAULTS" --seed "$SEED" --addr "$ADDR")

echo "== site: ${SITE_ARGS[*]}"
timeout 60 "$SITE_BIN" "${SITE_ARGS[@]}" --list-good >"$WORK/good.txt"
timeout 60 "$SITE_BIN" "${SITE_ARGS[@]}" --list-faults >"$WORK/faulty.tsv"
echo "   $(wc -l <"$WORK/good.txt") good URLs, $(wc -l <"$WORK/faulty.tsv") faulty URLs"

"$SITE_BIN" "${SITE_ARGS[@]}" 2>"$WORK/site.err" &
SITE_PID=$!
for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    kill -0 "$SITE_PID" 2>/dev/null || { cat "$WORK/site.err" >&2; exit 1; }
    sleep 0.1
done

# shellcheck disable=SC2206
# --no-sitemaps: the site has none, and every URL recorded must be one of
# its own.
CRAWL_ARGS=(--cores 2 --timeout 2 --read-timeout 1 --max-tries 2 --no-sitemaps
    --max-tasks "$MAX_TASKS" --per-host "$PER_HOST" -q -o "$WORK/records.jsonl" $EXTRA_ARGS
    "http://$ADDR/")
echo "== crawl: ringcrawl ${CRAWL_ARGS[*]}"
START=$(date +%s.%N)
"$CRAWL_BIN" "${CRAWL_ARGS[@]}" 2>"$WORK/crawl.err" &
CRAWL_PID=$!
TIMED_OUT=0
: >"$WORK/rss.txt"
while kill -0 "$CRAWL_PID" 2>/dev/null; do
    NOW=$(date +%s.%N)
    RSS=$(awk '/^VmRSS:/ {print $2}' "/proc/$CRAWL_PID/status" 2>/dev/null || true)
    [ -n "$RSS" ] && echo "$NOW $RSS" >>"$WORK/rss.txt"
    if awk -v n="$NOW" -v s="$START" -v l="$TIME_LIMIT" 'BEGIN {exit !(n - s > l)}'; then
        echo "!! crawl still running after ${TIME_LIMIT}s: killing it" >&2
        kill -9 "$CRAWL_PID" 2>/dev/null || true
        TIMED_OUT=1
        break
    fi
    sleep 0.5
done
set +e
wait "$CRAWL_PID"
CRAWL_RC=$?
set -e
CRAWL_PID=""
END=$(date +%s.%N)
kill "$SITE_PID" 2>/dev/null || true
wait "$SITE_PID" 2>/dev/null || true
SITE_PID=""

python3 - "$WORK" "$CRAWL_RC" "$TIMED_OUT" "$START" "$END" "$MAX_RSS_MB" "${STRICT_KINDS:-}" <<'PY'
import json, statistics, sys
from collections import Counter, defaultdict

work, crawl_rc, timed_out, start, end, max_rss_mb, strict = sys.argv[1:8]
crawl_rc, timed_out = int(crawl_rc), int(timed_out) == 1
elapsed = float(end) - float(start)
violations = []
warnings = []

good = set(open(f"{work}/good.txt").read().split())
faulty = {}
for line in open(f"{work}/faulty.tsv"):
    url, kind = line.rstrip("\n").split("\t")
    faulty[url] = kind

records = defaultdict(list)
bad_lines = 0
try:
    for line in open(f"{work}/records.jsonl"):
        try:
            r = json.loads(line)
            records[r["url"]].append(r)
        except (ValueError, KeyError):
            bad_lines += 1
except FileNotFoundError:
    violations.append("no records file")
if bad_lines:
    violations.append(f"{bad_lines} unparsable record lines")

def show(rs):
    r = rs[0]
    return f"status={r.get('status')} error_kind={r.get('error_kind')} tries={r.get('tries')}"

def report(title, items, limit=8):
    if items:
        violations.append(f"{title}: {len(items)}")
        for item in items[:limit]:
            print(f"   {title}: {item}")

missing_good = sorted(u for u in good if u not in records)
dup = sorted(u for u, rs in records.items() if len(rs) > 1)
good_wrong = sorted(
    f"{u} {show(records[u])}"
    for u in good
    if u in records
    and not (200 <= (records[u][0].get("status") or 0) < 400 and not records[u][0].get("error"))
)
missing_faulty = sorted(u for u in faulty if u not in records)
faulty_wrong = sorted(
    f"{u} ({faulty[u]}) {show(records[u])}"
    for u in faulty
    if u in records
    and not (records[u][0].get("error") or not 200 <= (records[u][0].get("status") or 0) < 300)
)
extra = sorted(u for u in records if u not in good and u not in faulty)
report("good URL without a record", missing_good)
report("URL with more than one record", [f"{u} x{len(records[u])}" for u in dup])
report("good URL recorded as failed", good_wrong)
report("faulty URL without a record", missing_faulty)
report("faulty URL recorded as a success", faulty_wrong)
report("record for an unexpected URL", extra)

# What each fault kind should give (ringcrawl's error kinds).
expect = {
    "hangup": lambda r: r.get("error_kind") == "empty_response",
    "reset_mid_body": lambda r: r.get("error_kind") in ("reset", "truncated", "io") and r.get("truncated"),
    "short_body": lambda r: r.get("error_kind") == "truncated" and r.get("status") == 200,
    "bad_status_line": lambda r: r.get("error_kind") == "bad_head",
    "garbage": lambda r: r.get("error_kind") in ("bad_head", "head_cut"),
    "huge_head": lambda r: r.get("error_kind") == "head_too_large",
    "conflicting_length": lambda r: r.get("error_kind") == "conflicting_length",
    "status_500": lambda r: r.get("status") == 500 and not r.get("error"),
    "status_503": lambda r: r.get("status") == 503 and not r.get("error"),
    "slow_body": lambda r: r.get("error_kind") == "deadline" and r.get("elapsed_ms", 0) < 3500,
    "bad_chunk": lambda r: r.get("error_kind") == "bad_chunk",
    "not_found": lambda r: r.get("status") == 404 and not r.get("error"),
}
by_kind = defaultdict(Counter)
elapsed_by_kind = defaultdict(list)
unexpected = []
for url, kind in faulty.items():
    if url not in records:
        continue
    r = records[url][0]
    by_kind[kind][f"{r.get('status')}/{r.get('error_kind')}/tries={r.get('tries')}"] += 1
    elapsed_by_kind[kind].append(r.get("elapsed_ms") or 0)
    if not expect[kind](r):
        unexpected.append(f"{url} ({kind}) {show(records[url])} elapsed_ms={r.get('elapsed_ms'):.0f}")
if unexpected:
    (violations if strict else warnings).append(f"fault outcome other than expected: {len(unexpected)}")
    for u in unexpected[:8]:
        print(f"   unexpected outcome: {u}")

# Memory.
samples = []
for line in open(f"{work}/rss.txt"):
    t, kb = line.split()
    samples.append((float(t), int(kb)))
rss = [kb / 1024 for _, kb in samples]
if len(rss) >= 4:
    second = rss[len(rss) // 2 :]
    med2 = statistics.median(second)
    mx = max(rss)
    if mx > 2 * med2:
        violations.append(f"RSS max {mx:.1f} MiB > 2 x second-half median {med2:.1f} MiB")
    if mx > float(max_rss_mb):
        violations.append(f"RSS max {mx:.1f} MiB > {max_rss_mb} MiB")
    q = max(1, len(rss) // 4)
    early, late = statistics.median(rss[q : 2 * q] or rss), statistics.median(rss[-q:])
else:
    med2 = mx = early = late = float("nan")
    warnings.append(f"only {len(rss)} RSS samples: the crawl was too short to judge memory")

if timed_out:
    violations.append("crawl timed out")
elif crawl_rc != 0:
    violations.append(f"ringcrawl exited {crawl_rc}")

n = sum(len(rs) for rs in records.values())
print()
print("== soak summary")
print(f"   crawl: {n} records in {elapsed:.1f} s ({n / max(elapsed, 1e-9):.0f} records/s), exit {crawl_rc}")
print(f"   expected: {len(good)} good, {len(faulty)} faulty; recorded: "
      f"{len(good & records.keys())} good, {len(faulty.keys() & records.keys())} faulty, {len(extra)} other")
if rss:
    print(f"   RSS (MiB, {len(rss)} samples every 0.5 s): min {min(rss):.1f}  median {statistics.median(rss):.1f}  "
          f"max {max(rss):.1f}  second-half median {med2:.1f}  2nd-quarter median {early:.1f}  last-quarter median {late:.1f}")
print("   faulty URLs by kind: outcome (status/error_kind/tries) x count, elapsed ms max")
for kind in sorted(by_kind):
    outcomes = ", ".join(f"{k} x{c}" for k, c in by_kind[kind].most_common())
    print(f"     {kind:<19} {outcomes}   max {max(elapsed_by_kind[kind]):.0f} ms")
kinds = Counter(r[0].get("error_kind") for r in records.values() if r[0].get("error_kind"))
print("   error kinds: " + ", ".join(f"{k} {c}" for k, c in kinds.most_common()))
for w in warnings:
    print(f"   WARNING: {w}")
if violations:
    print("   FAIL:")
    for v in violations:
        print(f"     - {v}")
    sys.exit(1)
print("   PASS")
PY
