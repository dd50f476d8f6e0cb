#!/usr/bin/env bash
# Scale: crawl N pages of the endless site and report speed and memory.
#
#   scripts/scale.sh                        # build release, crawl 1,000,000 pages
#   scripts/scale.sh 100000 1000000         # one crawl per size, in turn
#   SKIP_BUILD=1 scripts/scale.sh 20000     # the small size (well under a minute)
#
# The site: ringcrawl-site --endless (a billion pages over HOSTS host names
# h{k}.endless.test, ~2 KB a page, 10 links a page, half of them to other
# hosts, almost all to pages not yet seen), with keep-alive, on 127.0.0.1
# (a free port), SITE_THREADS executors; a fresh site for every size, so its
# count of requests is the crawl's. The crawl starts from every host's root,
# with every host pinned by --resolve (from ringcrawl-site --pins):
#   ringcrawl --max-pages N --ignore-robots --no-sitemaps -q -o OUTPUT --report-json FILE
#             --resolve h{k}.endless.test:PORT:127.0.0.1 ... ROOTS
# under GNU time. Reported per size: pages fetched (the report's urls),
# pages/s (the report's urls_per_s), peak RSS (GNU time's %M and the
# report's peak_rss_kib), URLs discovered (records + the report's
# queued_left), peak RSS bytes per discovered URL, and the site's own count:
# distinct pages served, requests for a page served before (duplicates) and
# 404s. A size fails (exit status 1 at the end) if a page was fetched twice,
# a request was a 404, a record is an error, or the crawl did not stop at N.
#
# Disk: the crawler's TMPDIR is the size's work directory, where the seen-set
# and the frontier keep what does not fit their memory (--seen-memory,
# --frontier-memory); its size is sampled every second and the peak reported.
#
# SEEDS=1, the many-hosts mode: the roots go to the crawler in a seed file
# (--seeds, one root a line), not in argv, and names are resolved by a
# dnsmasq on 127.0.0.1 answering every *.endless.test with 127.0.0.1
# (address=/endless.test/127.0.0.1, answered with a TTL of an hour: dnsmasq
# gives its own answers a TTL of 0 by default) through --dns-server, not
# pinned; with
# DNS=pin instead, by one wildcard --resolve '*:PORT:127.0.0.1'. Set HOSTS
# up to 10,000,000 (the site's cap). Reported besides: hosts, the DNS
# queries the crawler sent and their rate, and the frontier's hosts' state
# at its peak (host_memory_peak) and the URLs that waited for room.
#   HOSTS=1000000 SEEDS=1 scripts/scale.sh 10000000
#
# TLS=1: the site is served over https (TLS 1.2 and 1.3) with a certificate
# for *.endless.test from a CA made for the run, which the crawler trusts
# (--ca-cert); roots and links are https, so every host costs a full
# handshake and then resumes from the crawler's session cache. Reported
# besides: the TLS session cache's size at the end.
#   HOSTS=100000 SEEDS=1 TLS=1 scripts/scale.sh 1000000
#
# STATE=1: the crawl keeps a state directory in its work directory
# (--state; records go to its records.jsonl instead of OUTPUT), whose size
# counts in the peak disk; then it is resumed with a budget of
# RESUME_PAGES (100) more pages against the same site, and the resume's
# wall time and the state directory's size are reported. The site's count
# then covers both runs: no page may be served twice across them.
#
# Environment (defaults): HOSTS (4096), SEEDS, DNS (dnsmasq), SITE_THREADS (1), CORES (the
# crawler's default: every CPU), MAX_TASKS (100), OUTPUT (/dev/null: records
# are written, not kept), TIME_LIMIT (1800 s a crawl; then it is killed and
# the size fails), BUILD_LIMIT (1200), BIN_DIR
# (${CARGO_TARGET_DIR:-target}/release), SKIP_BUILD, KEEP (keep the work
# directory), EXTRA_ARGS (more crawler flags). Traffic stays on 127.0.0.1.
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1000000)
HOSTS=${HOSTS:-4096}
SITE_THREADS=${SITE_THREADS:-1}
MAX_TASKS=${MAX_TASKS:-100}
OUTPUT=${OUTPUT:-/dev/null}
TIME_LIMIT=${TIME_LIMIT:-1800}
BUILD_LIMIT=${BUILD_LIMIT:-1200}
BIN_DIR=${BIN_DIR:-${CARGO_TARGET_DIR:-target}/release}
EXTRA_ARGS=${EXTRA_ARGS:-}
STATE=${STATE:-}
SEEDS=${SEEDS:-}
TLS=${TLS:-}
DNS=${DNS:-dnsmasq}
RESUME_PAGES=${RESUME_PAGES:-100}
CORES_ARG=()
[ -n "${CORES:-}" ] && CORES_ARG=(--cores "$CORES")

for n in "${SIZES[@]}"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "scale.sh: size $n is not a page count" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/scale.XXXXXX")
SITE_PID=""
CRAWL_PID=""
DNS_PID=""
stop_site() {
    if [ -n "$SITE_PID" ]; then
        kill -TERM "$SITE_PID" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$SITE_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SITE_PID" 2>/dev/null || true
        wait "$SITE_PID" 2>/dev/null || true
        SITE_PID=""
    fi
}
cleanup() {
    # Only the processes this script started, by PID.
    [ -n "$CRAWL_PID" ] && kill -9 "$CRAWL_PID" 2>/dev/null || true
    [ -n "$DNS_PID" ] && kill -TERM "$DNS_PID" 2>/dev/null || true
    stop_site
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
[ -x /usr/bin/time ] || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 1; }
HARD_NOFILE=$(ulimit -Hn)
[ "$HARD_NOFILE" = unlimited ] && HARD_NOFILE=1048576
ulimit -n "$HARD_NOFILE"
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "== commit $COMMIT, $(nproc) CPUs, $HOSTS hosts${TLS:+ over https}, site threads $SITE_THREADS, max-tasks $MAX_TASKS"

# field FILE KEY[.KEY]: a number from the crawler's JSON report.
field() {
    python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(v)' "$1" "$2"
}

# start_dnsmasq DIR: a dnsmasq on 127.0.0.1:DNS_PORT (a free port) that
# answers every name under endless.test with 127.0.0.1 and nothing else.
start_dnsmasq() {
    local dir=$1 bin
    bin=$(command -v dnsmasq || echo /usr/sbin/dnsmasq)
    [ -x "$bin" ] || { echo "SEEDS=1 needs dnsmasq (Debian: dnsmasq-base), or DNS=pin" >&2; exit 1; }
    for _ in $(seq 10); do
        DNS_PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$bin" --keep-in-foreground --conf-file=/dev/null --pid-file= --no-resolv --no-hosts \
            --port="$DNS_PORT" --listen-address=127.0.0.1 --bind-interfaces \
            --address=/endless.test/127.0.0.1 --local-ttl=3600 --cache-size=10000 --dns-forward-max=1000 \
            2>"$dir/dnsmasq.log" &
        DNS_PID=$!
        sleep 0.5
        kill -0 "$DNS_PID" 2>/dev/null && return 0
        DNS_PID=""
    done
    cat "$dir/dnsmasq.log" >&2
    echo "dnsmasq would not start" >&2
    exit 1
}
stop_dnsmasq() {
    if [ -n "$DNS_PID" ]; then
        kill -TERM "$DNS_PID" 2>/dev/null || true
        wait "$DNS_PID" 2>/dev/null || true
        DNS_PID=""
    fi
}

ROWS=()
HOST_ROWS=()
FAILED=0
for n in "${SIZES[@]}"; do
    run="$WORK/$n"
    mkdir -p "$run"
    site_tls=()
    crawl_tls=()
    if [ -n "$TLS" ]; then
        site_tls=(--tls --ca-file "$run/ca.pem")
        crawl_tls=(--ca-cert "$run/ca.pem")
    fi
    "$SITE_BIN" --endless --addr 127.0.0.1:0 --hosts "$HOSTS" --threads "$SITE_THREADS" \
        "${site_tls[@]}" 2>"$run/site.log" &
    SITE_PID=$!
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's|^listening on https\{0,1\}://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$run/site.log")
        [ -n "$port" ] && break
        kill -0 "$SITE_PID" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$run/site.log" >&2; echo "the site did not start" >&2; exit 1; }
    resolve=()
    roots=()
    if [ -n "$SEEDS" ]; then
        "$SITE_BIN" --endless --hosts "$HOSTS" --addr "127.0.0.1:$port" "${site_tls[@]:0:1}" --roots >"$run/seeds.txt"
        roots=(--seeds "$run/seeds.txt")
        if [ "$DNS" = pin ]; then
            resolve=(--resolve "*:$port:127.0.0.1")
        else
            start_dnsmasq "$run"
            resolve=(--dns-server "127.0.0.1:$DNS_PORT")
        fi
        echo "== $n pages: site on 127.0.0.1:$port, $(wc -l <"$run/seeds.txt") seeds, names by ${DNS}"
    else
        mapfile -t pins < <("$SITE_BIN" --endless --hosts "$HOSTS" --addr "127.0.0.1:$port" --pins)
        mapfile -t roots < <("$SITE_BIN" --endless --hosts "$HOSTS" --addr "127.0.0.1:$port" "${site_tls[@]:0:1}" --roots)
        for p in "${pins[@]}"; do resolve+=(--resolve "$p"); done
        echo "== $n pages: site on 127.0.0.1:$port, ${#roots[@]} roots"
    fi
    mkdir -p "$run/tmp"
    out_args=(-o "$OUTPUT")
    [ -n "$STATE" ] && out_args=(--state "$run/tmp/state")
    # shellcheck disable=SC2086
    TMPDIR="$run/tmp" timeout -s KILL "$TIME_LIMIT" /usr/bin/time -f '%M %e' -o "$run/time" \
        "$CRAWL_BIN" --max-pages "$n" --ignore-robots --no-sitemaps -q "${out_args[@]}" \
        --max-tasks "$MAX_TASKS" "${CORES_ARG[@]}" --report-json "$run/report.json" \
        $EXTRA_ARGS "${crawl_tls[@]}" "${resolve[@]}" "${roots[@]}" &
    CRAWL_PID=$!
    # The peak of the crawler's disk use, sampled each second.
    (
        peak=0
        while kill -0 "$CRAWL_PID" 2>/dev/null; do
            used=$(du -sb "$run/tmp" 2>/dev/null | cut -f1)
            [ "${used:-0}" -gt "$peak" ] && peak=$used && echo "$peak" >"$run/disk"
            sleep 1
        done
    ) &
    SAMPLER_PID=$!
    status=0
    wait "$CRAWL_PID" || status=$?
    CRAWL_PID=""
    wait "$SAMPLER_PID" 2>/dev/null || true
    disk=$(cat "$run/disk" 2>/dev/null || echo 0)
    resumed=0
    if [ -n "$STATE" ] && [ "$status" -eq 0 ]; then
        state_bytes=$(du -sb "$run/tmp/state" | cut -f1)
        TMPDIR="$run/tmp" timeout -s KILL "$TIME_LIMIT" /usr/bin/time -f '%M %e' -o "$run/resume-time" \
            "$CRAWL_BIN" --resume "$run/tmp/state" --max-pages "$((n + RESUME_PAGES))" \
            --report-json "$run/resume.json" || status=$?
        resumed=$(field "$run/resume.json" urls)
        read -r resume_kib resume_wall <"$run/resume-time"
        echo "state directory $((state_bytes / 1048576)) MiB; resumed with $RESUME_PAGES pages more:" \
            "$resumed pages in ${resume_wall}s wall, peak RSS ${resume_kib} KiB"
    fi
    stop_site
    stop_dnsmasq
    counts=$(sed -n 's/^endless site: requests=//p' "$run/site.log")
    if [ "$status" -ne 0 ] || [ ! -s "$run/report.json" ]; then
        echo "crawl of $n pages failed (exit status $status); site: ${counts:-no count}" >&2
        FAILED=1
        continue
    fi
    read -r time_kib wall <"$run/time"
    urls=$(field "$run/report.json" urls)
    rate=$(field "$run/report.json" urls_per_s)
    elapsed=$(field "$run/report.json" elapsed_s)
    rss_kib=$(field "$run/report.json" peak_rss_kib)
    left=$(field "$run/report.json" queued_left)
    errors=$(field "$run/report.json" errors)
    # counts: "R pages=P duplicates=D not_found=F"
    read -r requests pages dups notfound <<<"$(echo "$counts" | sed 's/[a-z_]*=//g')"
    discovered=$((urls + left))
    row=$(python3 - "$n" "$urls" "$rate" "$elapsed" "$time_kib" "$rss_kib" "$discovered" \
        "$pages" "$dups" "$notfound" "$disk" <<'EOF'
import sys
n, urls, rate, elapsed, time_kib, rss_kib, discovered, pages, dups, nf, disk = sys.argv[1:]
per_url = int(time_kib) * 1024 / max(int(discovered), 1)
print(f"| {int(n):,} | {int(urls):,} | {float(rate):,.0f} | {float(elapsed):.1f} "
      f"| {int(time_kib) / 1024:,.1f} | {int(rss_kib) / 1024:,.1f} | {int(discovered):,} "
      f"| {per_url:,.0f} | {int(disk) / 2**20:,.0f} | {int(pages):,} | {int(dups):,} | {int(nf):,} |")
EOF
)
    ROWS+=("$row")
    echo "pages $urls, $rate pages/s, ${elapsed}s (wall ${wall}s), peak RSS ${time_kib} KiB" \
        "(report ${rss_kib} KiB), discovered $discovered, errors $errors;" \
        "site: requests $requests, pages $pages, duplicates $dups, 404s $notfound"
    queries=$(field "$run/report.json" dns.queries)
    host_peak=$(field "$run/report.json" host_memory_peak)
    waited=$(field "$run/report.json" urls_waited_for_hosts)
    tls_bytes=$(field "$run/report.json" tls_session_bytes)
    dns_bytes=$(field "$run/report.json" dns.cache_bytes)
    HOST_ROWS+=("$(python3 -c 'import sys
n, hosts, urls, el, q, hp, w, tls, dns, kib = sys.argv[1:]
print(f"| {int(n):,} | {int(hosts):,} | {int(urls):,} | {int(urls) / max(float(el), 1e-9):,.0f} | {int(q):,} | {int(q) / max(float(el), 1e-9):,.0f} "
      f"| {int(kib) / 1024:,.1f} | {int(hp) / 2**20:,.1f} | {int(dns) / 2**20:,.1f} | {int(tls) / 2**20:,.1f} | {int(w):,} |")' \
        "$n" "$HOSTS" "$urls" "$elapsed" "$queries" "$host_peak" "$waited" "$tls_bytes" "$dns_bytes" "$time_kib")")
    problems=()
    [ "$urls" -eq "$n" ] || problems+=("$urls records, not $n")
    [ "$dups" -eq 0 ] || problems+=("$dups requests for pages already served: $(grep 'served more than once' "$run/site.log" | head -3 | tr '\n' ' ')")
    [ "$notfound" -eq 0 ] || problems+=("$notfound 404s")
    [ "$errors" -eq 0 ] || problems+=("$errors error records")
    [ "$pages" -eq "$((urls + resumed))" ] || problems+=("the site served $pages pages for $((urls + resumed)) records")
    if [ -n "$STATE" ]; then
        [ "$resumed" -eq "$RESUME_PAGES" ] || problems+=("the resume fetched $resumed pages, not $RESUME_PAGES")
        left_spill=$(find "$run/tmp/state" -maxdepth 1 -name 'ringcrawl-spill-*' | head -3)
        [ -z "$left_spill" ] || problems+=("spill directories left in the state directory: $left_spill")
        rm -rf "$run/tmp/state"
    fi
    [ -z "$(ls -A "$run/tmp")" ] || problems+=("the crawler left files in its TMPDIR: $(ls -A "$run/tmp" | head -3 | tr '\n' ' ')")
    if [ ${#problems[@]} -gt 0 ]; then
        printf 'FAIL (%s pages): %s\n' "$n" "${problems[@]}" >&2
        FAILED=1
    fi
done

echo
echo "commit $COMMIT, $(nproc) CPUs, $HOSTS hosts${TLS:+ over https}, max-tasks $MAX_TASKS, site threads $SITE_THREADS"
echo
echo "| --max-pages | pages | pages/s | seconds | peak RSS MiB (time) | peak RSS MiB (report) | URLs discovered | RSS bytes / URL | peak disk MiB | site: pages | duplicates | 404s |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for row in "${ROWS[@]}"; do echo "$row"; done
echo
echo "| --max-pages | hosts | pages | pages/s | DNS queries | queries/s | peak RSS MiB | hosts' state at peak MiB | DNS cache MiB (end) | TLS sessions MiB (end) | URLs that waited for room |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for row in "${HOST_ROWS[@]}"; do echo "$row"; done
exit "$FAILED"
