#!/usr/bin/env bash
# Resume: the time a `--resume` takes, for one or more builds, on one state
# directory made once.
#
#   scripts/resume_bench.sh 2000000 OLD_BIN NEW_BIN      # 3 alternating rounds
#   ROUNDS=5 scripts/resume_bench.sh 1000000 target/release/ringcrawl
#
# A crawl of N pages of the endless site (ringcrawl-site --endless, HOSTS
# host names pinned by --resolve, as scripts/scale.sh) keeps a state
# directory (--state), made by the first binary. Then, ROUNDS times, each
# binary in turn resumes a fresh copy of it (cp -a) with a budget of
# RESUME_PAGES (100) pages more, against the same site, which stays up: a
# copy's pages are fetched once by each resume (the site's count of pages
# served twice is that of the resumes, and is not checked; each resume's
# own records are). Reported per resume: wall seconds and peak RSS (GNU
# time), the pages it fetched, and its log lines about its steps (-vv),
# each after the seconds since it started. Then, per binary, the median and the range of the wall time.
#
# With AGAIN=1 each copy is resumed a second time, after the first
# (another RESUME_PAGES pages): the second reads only what the first
# logged (the log's records and the index lines a resume has checked are
# not read again; src/state/done/covered.rs), and is reported apart.
#
# CRAWL_FLAGS: more flags for the first crawl (its log is crawl.log), e.g.
# "--checkpoint-interval 10s -v" to compact within a run of a few minutes.
#
# Environment (defaults): HOSTS (4096), CORES (every CPU), MAX_TASKS (100),
# ROUNDS (3), RESUME_PAGES (100), AGAIN (off), SITE_BIN (target/release/ringcrawl-site),
# WORK (a new directory under $TMPDIR; KEEP=1 keeps it). Traffic stays on
# 127.0.0.1; only the processes this script starts are stopped, by PID.
set -euo pipefail

cd "$(dirname "$0")/.."
N=${1:?usage: resume_bench.sh PAGES BIN [BIN...]}
shift
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || { echo "give at least one ringcrawl binary" >&2; exit 2; }
HOSTS=${HOSTS:-4096}
MAX_TASKS=${MAX_TASKS:-100}
ROUNDS=${ROUNDS:-3}
RESUME_PAGES=${RESUME_PAGES:-100}
SITE_BIN=${SITE_BIN:-target/release/ringcrawl-site}
CORES_ARG=()
[ -n "${CORES:-}" ] && CORES_ARG=(--cores "$CORES")
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/resume.XXXXXX")}
mkdir -p "$WORK"
SITE_PID=""
cleanup() {
    if [ -n "$SITE_PID" ]; then
        kill -TERM "$SITE_PID" 2>/dev/null || true
        wait "$SITE_PID" 2>/dev/null || true
    fi
    if [ -n "${KEEP:-}" ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A state directory kept from an earlier call (KEEP=1, same WORK) is used
# again, with a site on the port its crawl pinned.
port=0
[ -d "$WORK/state" ] && port=$(cat "$WORK/port")
"$SITE_BIN" --endless --addr "127.0.0.1:$port" --hosts "$HOSTS" 2>"$WORK/site.log" &
SITE_PID=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$WORK/site.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$WORK/site.log" >&2; exit 1; }
echo "$port" >"$WORK/port"
mapfile -t pins < <("$SITE_BIN" --endless --hosts "$HOSTS" --addr "127.0.0.1:$port" --pins)
mapfile -t roots < <("$SITE_BIN" --endless --hosts "$HOSTS" --addr "127.0.0.1:$port" --roots)
resolve=()
for p in "${pins[@]}"; do resolve+=(--resolve "$p"); done

if [ -d "$WORK/state" ]; then
    echo "== the state directory of $WORK, kept: $(du -sm "$WORK/state" | cut -f1) MiB"
else
    echo "== crawl of $N pages with --state ($(basename "${BINS[0]}"), commit $(git rev-parse --short HEAD))"
    mkdir -p "$WORK/tmp"
    TMPDIR="$WORK/tmp" /usr/bin/time -f '%M %e' -o "$WORK/crawl-time" \
        "${BINS[0]}" --max-pages "$N" --ignore-robots --no-sitemaps -q --state "$WORK/state" \
        --max-tasks "$MAX_TASKS" "${CORES_ARG[@]}" --report-json "$WORK/crawl.json" \
        ${CRAWL_FLAGS:-} "${resolve[@]}" "${roots[@]}" 2>"$WORK/crawl.log"
    read -r kib wall <"$WORK/crawl-time"
    echo "crawl: ${wall}s, peak RSS $((kib / 1024)) MiB; state directory $(du -sm "$WORK/state" | cut -f1) MiB" \
        "($(find "$WORK/state" -name 'journal-*.bin' -printf '%s\n' | awk '{s+=$1} END {print int(s/1048576)}') MiB of journals," \
        "$(find "$WORK/state" -name 'journal-*.bin' -printf '%b\n' | awk '{s+=$1} END {print int(s*512/1048576)}') MiB of them on disk," \
        "$(find "$WORK/state" -name 'base-*.bin' -printf '%s\n' | awk '{s+=$1} END {print int(s/1048576)}') MiB of bases)"
    grep -h "compacted in run" "$WORK/crawl.log" || true
fi

# stamp: the resume's log lines about its steps, each after the seconds
# since the resume started.
stamp() {
    python3 -u -c 'import re, sys, time
start = time.monotonic()
steps = re.compile(r"queued again|journal|replay|compact|resume|Finished|stopped|seconds")
for line in sys.stdin:
    if steps.search(line):
        print(f"{time.monotonic() - start:7.2f}s {line}", end="")'
}

declare -A TIMES
for round in $(seq "$ROUNDS"); do
    for i in "${!BINS[@]}"; do
        bin=${BINS[$i]}
        copy="$WORK/copy"
        rm -rf "$copy"
        cp -a "$WORK/state" "$copy"
        # The manifest names the log by its absolute path: the copy's own.
        python3 - "$copy/manifest.json" "$WORK/state" "$copy" <<'EOF'
import json, sys
path, old, new = sys.argv[1:]
m = json.load(open(path))
m["outputs"]["jsonl"] = m["outputs"]["jsonl"].replace(old, new, 1)
json.dump(m, open(path, "w"))
EOF
        passes=1
        [ -n "${AGAIN:-}" ] && passes=2
        for pass in $(seq "$passes"); do
            log="$WORK/resume-$round-$i-$pass.log"
            sync
            TMPDIR="$WORK/tmp" /usr/bin/time -f '%M %e' -o "$WORK/resume-time" \
                "$bin" --resume "$copy" --max-pages "$((N + pass * RESUME_PAGES))" -vv \
                --report-json "$WORK/resume.json" 2> >(stamp >"$log") || {
                tail -5 "$log" >&2
                echo "resume failed" >&2
                exit 1
            }
            read -r kib wall <"$WORK/resume-time"
            pages=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["urls"])' "$WORK/resume.json")
            what="binary $i ($bin)"
            key=$i
            if [ "$pass" -eq 2 ]; then
                what="$what, resumed again"
                key="$i again"
            fi
            echo "round $round, $what: ${wall}s wall, peak RSS $((kib / 1024)) MiB, $pages pages"
            sed 's/^/    /' "$log" | head -12
            [ "$pages" -eq "$RESUME_PAGES" ] || echo "    (fetched $pages pages, not $RESUME_PAGES)"
            TIMES[$key]="${TIMES[$key]:-} $wall"
        done
    done
done
rm -rf "$WORK/copy"
echo
echo "| binary | resume seconds, median | range | runs |"
echo "|---|---:|---:|---|"
for key in $(printf '%s\n' "${!TIMES[@]}" | sort | tr ' ' '+'); do
    key=${key//+/ }
    i=${key%% *}
    name=${BINS[$i]}
    [ "$key" != "$i" ] && name="$name, resumed again"
    python3 - "$name" ${TIMES[$key]} <<'EOF'
import statistics, sys
bin, times = sys.argv[1], [float(t) for t in sys.argv[2:]]
print(f"| {bin} | {statistics.median(times):.1f} | {min(times):.1f}-{max(times):.1f} | {' '.join(f'{t:.1f}' for t in times)} |")
EOF
done
