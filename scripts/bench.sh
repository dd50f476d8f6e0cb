#!/usr/bin/env bash
# scripts/bench.sh — end-to-end crawl benchmark: ringcrawl against its peers
# on the same static site, served by nginx on 127.0.0.1.
#
#   scripts/bench.sh [RESULTS.md]          # default: bench-results.md
#   RUNS=1 TOOLS="ringcrawl wget" CORES= scripts/bench.sh /tmp/quick.md
#
# What it does, every step bounded by `timeout`:
#  1. builds ringcrawl and ringcrawl-site in release (cargo build --release --workspace --bins);
#  2. exports the synthetic site (PAGES pages, LINKS links each, ~PAGE_BYTES
#     bytes per page) as static files with `ringcrawl-site --export`, and
#     lists the URLs a complete crawl must fetch with `ringcrawl-site --list`
#     (same parameters, same 127.0.0.1:PORT);
#  3. installs what is missing (nginx-light or nginx, wget, wrk, GNU time,
#     via apt-get as root; aiohttp into a venv; the spider peer with cargo,
#     both under $CACHE) and starts nginx with its own config in a temp dir:
#     127.0.0.1:PORT, access_log off, worker_processes auto,
#     worker_connections 4096, the export's redirects.conf, 404 for the rest,
#     text/css and image/png types, and a stub_status page to count requests;
#  4. runs the tools in turn, RUNS rounds (alternating: one run of each tool
#     per round), each under /usr/bin/time:
#       ringcrawl  --max-tasks 100 -q -o FILE (plus --per-host 100,
#                  --ignore-robots and --no-sitemaps when the binary has them,
#                  so that one host gets all 100 fetches and no robots.txt or
#                  sitemap, like the peers);
#                  keep-alive connections, as the peers
#       ringcrawl --no-keep-alive  (when the binary has the flag) the same
#                  with one connection per page, as wrk's `Connection: close`
#       wget       -r -l inf -e robots=off --delete-after into a tmpfs (one
#                  connection, keep-alive; verbose log parsed for every URL
#                  requested, redirect hops included)
#       chapter    scripts/peers/chapter_crawler.py, the 500 Lines or Less
#                  asyncio + aiohttp crawler, max_tasks 100
#       spider     scripts/peers/spider-bench (the spider crate), 100
#                  concurrent, no robots.txt, same host
#       wire       wrk, 100 connections, `Connection: close`, WRK_SECONDS s,
#                  cycling through the expected URLs: the requests/s nginx can
#                  serve one connection each on this machine (the ceiling for
#                  one connection per page)
#       wire keep-alive  the same wrk with keep-alive connections (the
#                  ceiling for reused connections)
#       ringcrawl-baseline  (only with BASELINE=/path/to/ringcrawl) another
#                  build with the same flags, for A/B of a change side by side
#       ringcrawl -p  (REQUISITES=1 and the binary has --page-requisites)
#                  the same flags plus --page-requisites: every page read by
#                  html5gum for its requisites instead of the fast scanner
#                  (the site's images and stylesheets are also plain links,
#                  so the URLs fetched are the same)
#     then (CORES="1 2") ringcrawl --cores 1 against --cores 2, and (PIN=1)
#     ringcrawl --cores 1 on CPU 0 with nginx restarted on CPU 1 only (one
#     worker), with wrk on CPU 0 as that layout's wire limit (both with and
#     without keep-alive);
#     then (HTTPS=1) the https group: the site exported again with https
#     links, served by the same nginx over TLS on a second port (ssl on,
#     TLS 1.2 and 1.3, session cache and tickets on; certificate and key
#     from `ringcrawl-site --write-certs`, a CA made for the run):
#       ringcrawl https  the same flags plus --ca-cert CA (keep-alive)
#       ringcrawl https --no-keep-alive  one connection (and one TLS
#                  handshake, resumed after each shard's first) per page
#       spider https  the spider peer trusting the same CA: its reqwest
#                  0.13 client verifies with rustls-platform-verifier, which
#                  on Linux reads the roots from SSL_CERT_FILE when set
#       wire https keep-alive / wire https  wrk over TLS (it does not
#                  verify certificates), keep-alive and `Connection: close`:
#                  the ceilings for reused connections and for one
#                  connection per page;
#     then (GZIP=1) the gzip group: the site exported a third time, served
#     on a third port with nginx `gzip on` (level 1, text/html and text/css,
#     gzip_http_version 1.0, so a BASELINE that asks HTTP/1.0 gets gzip
#     too, without a length, on a connection nginx then closes), beside the plain
#     site, alternating:
#       ringcrawl plain  the peers group's ringcrawl again
#       ringcrawl gzip   the same flags on the gzip-served copy: every page
#                  arrives compressed and is decoded for its links;
#       ringcrawl-baseline gzip  (with BASELINE) the baseline binary there;
#       ringcrawl gzip --no-compression  asks identity there: what the
#                  compression costs and saves, same site, same server;
#  5. checks every crawl's URLs against the expected list (found / expected,
#     and URLs fetched that are not expected), and writes RESULTS.md: machine
#     info, one table of medians per group, ratios, every run, anomalies
#     (ringcrawl missing an expected URL or fetching an unexpected one is a
#     bug: the URLs are listed).
#
# Definitions: "fetched" is the number of distinct URLs the tool says it
# requested (for ringcrawl: JSONL records); pages/s = fetched / wall;
# CPU s = user + sys of the tool's process tree (GNU time); CPU µs/page =
# CPU / fetched; peak RSS = GNU time's %M; "requests" = requests nginx served
# during the run (stub_status), robots.txt and retries included; nginx CPU =
# user + sys of the nginx processes during the run (/proc).
#
# Environment (defaults): RUNS (3), TOOLS ("ringcrawl wget chapter spider
# wire"), CORES ("1 2"; empty to skip), PIN (1), PAGES (20000), LINKS (10),
# PAGE_BYTES (6000), SEED (1), MAX_TASKS (100), PORT (a free one),
# WRK_SECONDS (10), HTTPS (1; 0 skips the https group), TLS_PORT (a free
# one), GZIP (1; 0 skips the gzip group), GZIP_PORT (a free one), RUN_TIMEOUT (600 s per run), BUILD_TIMEOUT (1800 s),
# SPIDER_BUILD_TIMEOUT (3600 s), CACHE (~/.cache/ringcrawl-bench),
# KEEP (0; 1 keeps the work dir), NO_INSTALL (0; 1 never runs apt-get/pip),
# BUILD (1; 0 uses the release binaries already built), BASELINE (unset; a
# ringcrawl binary run as "ringcrawl-baseline" right after ringcrawl),
# REQUISITES (1; 0 skips "ringcrawl -p"), CLOSE (1; 0 skips the runs of one
# connection per page: ringcrawl --no-keep-alive and wrk's `Connection: close`,
# in every group; scripts/wire.sh sets it).
#
# It starts exactly one long-lived process, nginx (its PID is read from its
# own pid file in the work dir), and stops it by that PID on exit; every
# other process it starts runs in the foreground under `timeout`. All
# traffic is to 127.0.0.1.

# The whole script is one { ... } block, so bash reads it all before running
# it: editing this file while a benchmark runs cannot derail that run.
{
set -euo pipefail
# Debian puts nginx in /usr/sbin, which a non-root PATH may lack.
PATH=$PATH:/usr/sbin

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
RESULTS=${1:-bench-results.md}
case $RESULTS in /*) ;; *) RESULTS="$PWD/$RESULTS" ;; esac

RUNS=${RUNS:-3}
TOOLS=${TOOLS:-"ringcrawl wget chapter spider wire"}
CORES=${CORES-"1 2"}
PIN=${PIN:-1}
PAGES=${PAGES:-20000}
LINKS=${LINKS:-10}
PAGE_BYTES=${PAGE_BYTES:-6000}
SEED=${SEED:-1}
MAX_TASKS=${MAX_TASKS:-100}
WRK_SECONDS=${WRK_SECONDS:-10}
HTTPS=${HTTPS:-1}
GZIP=${GZIP:-1}
REQUISITES=${REQUISITES:-1}
CLOSE=${CLOSE:-1}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-1800}
SPIDER_BUILD_TIMEOUT=${SPIDER_BUILD_TIMEOUT:-3600}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringcrawl-bench}
KEEP=${KEEP:-0}
NO_INSTALL=${NO_INSTALL:-0}
BUILD=${BUILD:-1}

# minus A B: A - B, 3 decimals (awk, not bc: one package fewer).
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --------------------------------------------------------------------------
# Work dir (tmpfs when there is one) and cleanup.

SHM=/dev/shm
[ -d "$SHM" ] && [ -w "$SHM" ] || SHM=${TMPDIR:-/tmp}
WORK=$(mktemp -d "$SHM/ringcrawl-bench.XXXXXX")
# nginx workers may run as another user (nobody): let them read the site.
chmod 755 "$WORK"
NGINX_PID=""

alive() { # alive PID: running (a zombie is not)
    local state
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $state in Z*) return 1 ;; esac
}

stop_nginx() { # TERM the master we started (it stops its workers), KILL if it hangs
    [ -n "$NGINX_PID" ] || return 0
    local pid=$NGINX_PID workers
    NGINX_PID=""
    workers=$(ps -o pid= --ppid "$pid" 2>/dev/null || true)
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        alive "$pid" || return 0
        sleep 0.1
    done
    log "nginx $pid did not stop on TERM: KILL (and its workers $workers)"
    # shellcheck disable=SC2086
    kill -9 "$pid" $workers 2>/dev/null || true
}

cleanup() {
    local rc=$?
    stop_nginx
    if [ "$KEEP" = 1 ]; then
        log "work dir kept: $WORK"
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --------------------------------------------------------------------------
# Tools.

APT_UPDATED=0
apt_install() { # apt_install PACKAGE...: first one that installs wins
    [ "$NO_INSTALL" = 1 ] && return 1
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
    if [ $APT_UPDATED = 0 ]; then
        log "apt-get update"
        timeout 600 apt-get update -qq >/dev/null 2>&1 || log "apt-get update failed"
        APT_UPDATED=1
    fi
    local p
    for p in "$@"; do
        log "apt-get install $p"
        if DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq "$p" >"$WORK/apt.log" 2>&1; then
            return 0
        fi
    done
    return 1
}

need() { # need COMMAND PACKAGE...
    local cmd=$1
    shift
    command -v "$cmd" >/dev/null 2>&1 || [ -x "$cmd" ] || apt_install "$@" || return 1
    command -v "$cmd" >/dev/null 2>&1 || [ -x "$cmd" ]
}

need /usr/bin/time time || die "GNU time (/usr/bin/time) is needed: apt-get install time"
need python3 python3 || die "python3 is needed"
need nginx nginx-light nginx || die "nginx is needed: apt-get install nginx-light"
need curl curl || die "curl is needed"

has_tool() { case " $TOOLS " in *" $1 "*) return 0 ;; esac; return 1; }

# --------------------------------------------------------------------------
# Build ringcrawl.

if [ "$BUILD" = 1 ]; then
    log "building ringcrawl (release)"
    (cd "$REPO" && timeout "$BUILD_TIMEOUT" cargo build --release --workspace --bins -q) \
        || die "cargo build --release failed"
fi
TARGET_DIR=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' \
    2>/dev/null || echo "$REPO/target")
RINGCRAWL=$TARGET_DIR/release/ringcrawl
SITE=$TARGET_DIR/release/ringcrawl-site
[ -x "$RINGCRAWL" ] && [ -x "$SITE" ] || die "release binaries missing in $TARGET_DIR/release"

rc_flags() { # rc_flags BINARY: the flags every ringcrawl run gets, as far as BINARY has them
    local help
    help=$("$1" --help 2>&1 || true)
    printf '%s\n' --max-tasks "$MAX_TASKS" -q
    # Politeness defaults would throttle a single-host benchmark: lift them
    # the way the peers have them (all concurrency on the one host, no
    # robots.txt).
    grep -q -- '--per-host' <<<"$help" && printf '%s\n' --per-host "$MAX_TASKS"
    grep -q -- '--ignore-robots' <<<"$help" && printf '%s\n' --ignore-robots
    # The site has no sitemap and the peers guess none: no /sitemap.xml either.
    grep -q -- '--no-sitemaps' <<<"$help" && printf '%s\n' --no-sitemaps
    return 0
}
RC_HELP=$("$RINGCRAWL" --help 2>&1 || true)
mapfile -t RC_FLAGS < <(rc_flags "$RINGCRAWL")
# A BASELINE build gets the same flags as far as it has them (an older one
# may lack --no-sitemaps).
BASE_FLAGS=()
[ -n "${BASELINE:-}" ] && [ -x "$BASELINE" ] && mapfile -t BASE_FLAGS < <(rc_flags "$BASELINE")

# --------------------------------------------------------------------------
# Peers (each one optional: a peer that cannot be set up is reported and skipped).

SKIPPED=()  # "tool: reason"
skip() { SKIPPED+=("$1: $2"); TOOLS=$(sed "s/\b$1\b//" <<<"$TOOLS"); log "skipping $1: $2"; }

if has_tool wget && ! need wget wget; then skip wget "wget not installed"; fi
if has_tool wire && ! need wrk wrk; then skip wire "wrk not installed"; fi

VENV=$CACHE/venv
if has_tool chapter; then
    if ! "$VENV/bin/python" -c 'import aiohttp' 2>/dev/null; then
        mkdir -p "$CACHE"
        if [ "$NO_INSTALL" = 1 ]; then
            skip chapter "no aiohttp venv at $VENV (NO_INSTALL=1)"
        elif ! { timeout 300 python3 -m venv "$VENV" >"$WORK/venv.log" 2>&1 \
                 || { apt_install python3-venv && timeout 300 python3 -m venv "$VENV" >"$WORK/venv.log" 2>&1; }; } \
             || ! timeout 600 "$VENV/bin/pip" install -q aiohttp >>"$WORK/venv.log" 2>&1; then
            skip chapter "could not install aiohttp into $VENV: $(tail -1 "$WORK/venv.log")"
        fi
    fi
fi

SPIDER_DIR=$HERE/peers/spider-bench
SPIDER_TARGET=$CACHE/spider-target
SPIDER=$SPIDER_TARGET/release/spider-bench
if has_tool spider; then
    log "building the spider peer (first build can take many minutes)"
    mkdir -p "$CACHE"
    if ! timeout "$SPIDER_BUILD_TIMEOUT" cargo build --release -q \
            --manifest-path "$SPIDER_DIR/Cargo.toml" --target-dir "$SPIDER_TARGET" \
            >"$WORK/spider-build.log" 2>&1; then
        skip spider "build failed: $(grep -m1 -E '^error' "$WORK/spider-build.log" || tail -1 "$WORK/spider-build.log")"
        cp "$WORK/spider-build.log" "$CACHE/spider-build.log" 2>/dev/null || true
    fi
fi

# --------------------------------------------------------------------------
# The site.

if [ -z "${PORT:-}" ]; then
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
fi
ADDR=127.0.0.1:$PORT
ROOT=http://$ADDR/
SITE_ARGS=(--addr "$ADDR" --pages "$PAGES" --links "$LINKS" --page-bytes "$PAGE_BYTES" --seed "$SEED")

log "exporting the site (${PAGES} pages) to $WORK/site"
timeout 600 "$SITE" "${SITE_ARGS[@]}" --export "$WORK/site" 2>"$WORK/export.log" \
    || die "ringcrawl-site --export failed: $(tail -3 "$WORK/export.log")"
[ -f "$WORK/site/index.html" ] && [ -f "$WORK/site/redirects.conf" ] \
    || die "the export has no index.html or redirects.conf"
chmod -R a+rX "$WORK/site"
timeout 600 "$SITE" "${SITE_ARGS[@]}" --list | LC_ALL=C sort -u >"$WORK/expected.txt"
EXPECTED=$(wc -l <"$WORK/expected.txt")
[ "$EXPECTED" -gt 0 ] || die "ringcrawl-site --list printed nothing"
sed "s|^http://$ADDR||" "$WORK/expected.txt" >"$WORK/paths.txt"
EXPECTED_TXT=$WORK/expected.txt
if [ "$HTTPS" = 1 ]; then
    if [ -z "${TLS_PORT:-}" ]; then
        TLS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    fi
    TLS_ADDR=127.0.0.1:$TLS_PORT
    TLS_ROOT=https://$TLS_ADDR/
    TLS_ARGS=(--addr "$TLS_ADDR" --pages "$PAGES" --links "$LINKS" --page-bytes "$PAGE_BYTES" --seed "$SEED" --tls)
    log "exporting the https site (absolute links https://$TLS_ADDR/) and a CA with the site's certificate"
    timeout 600 "$SITE" "${TLS_ARGS[@]}" --export "$WORK/site-tls" 2>"$WORK/export-tls.log" \
        || die "ringcrawl-site --tls --export failed: $(tail -3 "$WORK/export-tls.log")"
    chmod -R a+rX "$WORK/site-tls"
    timeout 600 "$SITE" "${TLS_ARGS[@]}" --list | LC_ALL=C sort -u >"$WORK/expected-tls.txt"
    timeout 60 "$SITE" --write-certs "$WORK/certs" 2>"$WORK/certs.log" \
        || die "ringcrawl-site --write-certs failed: $(tail -3 "$WORK/certs.log")"
    chmod -R a+rX "$WORK/certs"
fi
if [ "$GZIP" = 1 ]; then
    if [ -z "${GZIP_PORT:-}" ]; then
        GZIP_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    fi
    GZIP_ADDR=127.0.0.1:$GZIP_PORT
    GZIP_ROOT=http://$GZIP_ADDR/
    GZIP_ARGS=(--addr "$GZIP_ADDR" --pages "$PAGES" --links "$LINKS" --page-bytes "$PAGE_BYTES" --seed "$SEED")
    log "exporting the site again for the gzip server (links to http://$GZIP_ADDR/)"
    timeout 600 "$SITE" "${GZIP_ARGS[@]}" --export "$WORK/site-gz" 2>"$WORK/export-gz.log" \
        || die "ringcrawl-site --export (gzip copy) failed: $(tail -3 "$WORK/export-gz.log")"
    chmod -R a+rX "$WORK/site-gz"
    timeout 600 "$SITE" "${GZIP_ARGS[@]}" --list | LC_ALL=C sort -u >"$WORK/expected-gz.txt"
fi
SITE_FILES=$(find "$WORK/site" -type f -name '*.*' ! -name redirects.conf | wc -l)
SITE_BYTES=$(du -sb "$WORK/site" | cut -f1)
log "site: $EXPECTED expected URLs, $SITE_FILES files, $SITE_BYTES bytes"

# --------------------------------------------------------------------------
# nginx.

STATUS_PATH=/__bench_nginx_status
# As root, nginx runs its workers as "nobody:nobody" unless told otherwise,
# and Debian has no group "nobody".
NGINX_USER=""
if [ "$(id -u)" = 0 ]; then
    if getent group nogroup >/dev/null; then NGINX_USER="user nobody nogroup;"; else NGINX_USER="user nobody;"; fi
fi
mkdir -p "$WORK/nginx/tmp" "$WORK/nginx/logs"

tls_server_block() { # the https server block, with HTTPS=1
    [ "$HTTPS" = 1 ] || return 0
    cat <<EOF
    server {
        listen $TLS_ADDR ssl reuseport backlog=4096;
        server_name _;
        ssl_certificate $WORK/certs/cert.pem;
        ssl_certificate_key $WORK/certs/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:SSL:10m;
        ssl_session_tickets on;
        root $WORK/site-tls;
        index index.html;
        include $WORK/site-tls/redirects.conf;
        location / {
            try_files \$uri =404;
        }
        location = / {
            try_files /index.html =404;
        }
    }
EOF
}

gzip_server_block() { # the gzip-on server block, with GZIP=1
    [ "$GZIP" = 1 ] || return 0
    cat <<EOF
    server {
        listen $GZIP_ADDR reuseport backlog=4096;
        server_name _;
        gzip on;
        gzip_comp_level 1;
        gzip_types text/css;
        gzip_http_version 1.0;
        gzip_min_length 256;
        root $WORK/site-gz;
        index index.html;
        include $WORK/site-gz/redirects.conf;
        location / {
            try_files \$uri =404;
        }
        location = / {
            try_files /index.html =404;
        }
    }
EOF
}

start_nginx() { # start_nginx WORKERS [CPU]: (re)start nginx, optionally pinned
    local workers=$1 cpu=${2:-}
    stop_nginx
    cat >"$WORK/nginx/nginx.conf" <<EOF
$NGINX_USER
worker_processes $workers;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events {
    worker_connections 4096;
}
http {
    types {
        text/html html;
        text/css css;
        image/png png;
    }
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    server {
        listen $ADDR reuseport backlog=4096;
        server_name _;
        root $WORK/site;
        index index.html;
        include $WORK/site/redirects.conf;
        location / {
            try_files \$uri =404;
        }
        location = / {
            try_files /index.html =404;
        }
        location = $STATUS_PATH {
            stub_status;
            allow 127.0.0.1;
            deny all;
        }
    }
$(tls_server_block)
$(gzip_server_block)
}
EOF
    rm -f "$WORK/nginx/nginx.pid"
    local pin=()
    [ -n "$cpu" ] && pin=(taskset -c "$cpu")
    timeout 30 "${pin[@]}" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" \
        2>"$WORK/nginx/logs/start.log" \
        || die "nginx did not start: $(cat "$WORK/nginx/logs/start.log" "$WORK/nginx/logs/error.log" 2>/dev/null | tail -3)"
    for _ in $(seq 50); do
        [ -s "$WORK/nginx/nginx.pid" ] && break
        sleep 0.1
    done
    NGINX_PID=$(cat "$WORK/nginx/nginx.pid" 2>/dev/null || true)
    [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null || die "nginx wrote no pid file"
    for _ in $(seq 50); do
        curl -s -o /dev/null --max-time 2 "http://$ADDR$STATUS_PATH" && break
        sleep 0.1
    done
    log "nginx $NGINX_PID on $ADDR ($workers workers${cpu:+, CPU $cpu})"
}

nginx_requests() { # requests nginx has served so far
    curl -s --max-time 5 "http://$ADDR$STATUS_PATH" | awk 'NR == 3 { print $3 }'
}

nginx_cpu_ticks() { # user + sys clock ticks of the nginx master and workers
    local pids p total=0
    pids="$NGINX_PID $(ps -o pid= --ppid "$NGINX_PID" 2>/dev/null || true)"
    for p in $pids; do
        # Fields after the ")" of comm: utime is the 12th, stime the 13th.
        total=$((total + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo $total
}
CLK_TCK=$(getconf CLK_TCK)

check_site() { # a few answers the crawl relies on
    local code type
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$ROOT")
    [ "$code" = 200 ] || die "nginx answers $code for /"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${ROOT}missing/0.html")
    [ "$code" = 404 ] || die "nginx answers $code for /missing/0.html (want 404)"
    local css png redirect
    css=$(grep -m1 '/static/.*\.css$' "$WORK/paths.txt" || true)
    png=$(grep -m1 '/img/.*\.png$' "$WORK/paths.txt" || true)
    redirect=$(grep -m1 '^/r/' "$WORK/paths.txt" || true)
    if [ -n "$css" ]; then
        type=$(curl -s -o /dev/null -w '%{content_type}' --max-time 5 "http://$ADDR$css")
        [ "$type" = text/css ] || die "nginx serves $css as '$type'"
    fi
    if [ -n "$png" ]; then
        type=$(curl -s -o /dev/null -w '%{content_type}' --max-time 5 "http://$ADDR$png")
        [ "$type" = image/png ] || die "nginx serves $png as '$type'"
    fi
    if [ -n "$redirect" ]; then
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$ADDR$redirect")
        case $code in 30?) ;; *) die "nginx answers $code for $redirect (want a redirect)" ;; esac
    fi
}

# --------------------------------------------------------------------------
# One measured run.

printf 'group\ttool\trun\texit\twall_s\tuser_s\tsys_s\trss_kb\tfetched\tfound\texpected\textra\trequests\tnginx_cpu_s\treq_per_s\n' \
    >"$WORK/runs.tsv"

urls_of() { # urls_of TOOL OUTFILE: the distinct URLs a tool fetched, sorted
    local tool=$1 out=$2
    case $tool in
        ringcrawl*)
            [ -f "$out" ] || return 0
            python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line:
        try:
            print(json.loads(line)["url"])
        except (ValueError, KeyError):
            pass
' <"$out" ;;
        wget)
            # Every request is logged as "--DATE TIME--  URL".
            [ -f "$out" ] && sed -n 's/^--[0-9-]* [0-9:]*--  \(.*\)$/\1/p' "$out" ;;
        chapter)
            [ -f "$out" ] && cut -f1 "$out" ;;
        spider*)
            [ -f "$out" ] && cat "$out" ;;
    esac | LC_ALL=C sort -u
}

run_tool() { # run_tool GROUP TOOL RUN: measure one crawl, append to runs.tsv
    local group=$1 tool=$2 run=$3
    local dir=$WORK/out/$group/$run
    mkdir -p "$dir"
    local slug=${tool//[^A-Za-z0-9]/_}
    local out=$dir/$slug.out timefile=$dir/$slug.time errlog=$dir/$slug.log
    local cmd=()
    case $tool in
        ringcrawl) cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" -o "$out" "$ROOT") ;;
        ringcrawl-baseline) cmd=("$BASELINE" "${BASE_FLAGS[@]}" -o "$out" "$ROOT") ;;
        "ringcrawl -p")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" --page-requisites -o "$out" "$ROOT") ;;
        "ringcrawl --no-keep-alive")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" --no-keep-alive -o "$out" "$ROOT") ;;
        "ringcrawl --cores 1 --no-keep-alive pinned")
            cmd=(taskset -c 0 "$RINGCRAWL" "${RC_FLAGS[@]}" --cores 1 --no-keep-alive -o "$out" "$ROOT") ;;
        "ringcrawl --cores 1 pinned")
            cmd=(taskset -c 0 "$RINGCRAWL" "${RC_FLAGS[@]}" --cores 1 -o "$out" "$ROOT") ;;
        "ringcrawl --cores "[0-9]*)
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" --cores "${tool##* }" -o "$out" "$ROOT") ;;
        wget)
            rm -rf "$WORK/wget"
            cmd=(wget -r -l inf -e robots=off --delete-after -P "$WORK/wget" -o "$out" "$ROOT") ;;
        chapter)
            cmd=("$VENV/bin/python" "$HERE/peers/chapter_crawler.py" --max_tasks "$MAX_TASKS" -o "$out" "$ROOT") ;;
        spider) cmd=("$SPIDER" "$ROOT" "$MAX_TASKS" "$out") ;;
        "ringcrawl https")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" --ca-cert "$WORK/certs/ca.pem" -o "$out" "$TLS_ROOT") ;;
        "ringcrawl https --no-keep-alive")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" --ca-cert "$WORK/certs/ca.pem" --no-keep-alive -o "$out" "$TLS_ROOT") ;;
        "ringcrawl-baseline https")
            cmd=("$BASELINE" "${BASE_FLAGS[@]}" --ca-cert "$WORK/certs/ca.pem" -o "$out" "$TLS_ROOT") ;;
        "ringcrawl plain")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" -o "$out" "$ROOT") ;;
        "ringcrawl gzip")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" -o "$out" "$GZIP_ROOT") ;;
        "ringcrawl-baseline gzip")
            cmd=("$BASELINE" "${BASE_FLAGS[@]}" -o "$out" "$GZIP_ROOT") ;;
        "ringcrawl gzip --no-compression")
            cmd=("$RINGCRAWL" "${RC_FLAGS[@]}" --no-compression -o "$out" "$GZIP_ROOT") ;;
        "spider https")
            cmd=(env SSL_CERT_FILE="$WORK/certs/ca.pem" "$SPIDER" "$TLS_ROOT" "$MAX_TASKS" "$out") ;;
        *) die "unknown tool $tool" ;;
    esac
    local req0 cpu0 t0 t1 rc=0
    req0=$(nginx_requests)
    cpu0=$(nginx_cpu_ticks)
    t0=$(date +%s.%N)
    /usr/bin/time -f '%U %S %M' -o "$timefile" \
        timeout -k 10 "$RUN_TIMEOUT" "${cmd[@]}" >"$errlog.stdout" 2>"$errlog" || rc=$?
    t1=$(date +%s.%N)
    local req1 cpu1
    req1=$(nginx_requests)
    cpu1=$(nginx_cpu_ticks)
    [ "$tool" = wget ] && rm -rf "$WORK/wget"

    urls_of "$tool" "$out" >"$dir/$slug.urls"
    local fetched found extra
    fetched=$(wc -l <"$dir/$slug.urls")
    found=$(LC_ALL=C comm -12 "$EXPECTED_TXT" "$dir/$slug.urls" | wc -l)
    extra=$(LC_ALL=C comm -13 "$EXPECTED_TXT" "$dir/$slug.urls" | wc -l)
    LC_ALL=C comm -23 "$EXPECTED_TXT" "$dir/$slug.urls" >"$dir/$slug.missing"
    LC_ALL=C comm -13 "$EXPECTED_TXT" "$dir/$slug.urls" >"$dir/$slug.extra"
    local user sys rss
    read -r user sys rss < <(grep -E '^[0-9.]+ [0-9.]+ [0-9]+$' "$timefile" | tail -1) || true
    printf '%s\t%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t\n' \
        "$group" "$tool" "$run" "$rc" "$(minus "$t1" "$t0")" \
        "${user:-0}" "${sys:-0}" "${rss:-0}" "$fetched" "$found" "$EXPECTED" "$extra" \
        "$((req1 - req0 - 1))" "$(minus "$cpu1" "$cpu0" | awk -v t="$CLK_TCK" '{ print $1 / t }')" >>"$WORK/runs.tsv"
    log "$group/$tool run $run: exit $rc, $(minus "$t1" "$t0") s, found $found/$EXPECTED, extra $extra, fetched $fetched"
    if [ "$rc" != 0 ]; then
        log "  $tool stderr: $(tail -2 "$errlog" | tr '\n' ' ')"
    fi
    # Keep what an anomaly report needs.
    mkdir -p "$WORK/keep"
    cp "$dir/$slug.missing" "$WORK/keep/$group.$slug.$run.missing"
    cp "$dir/$slug.extra" "$WORK/keep/$group.$slug.$run.extra"
    tail -5 "$errlog" >"$WORK/keep/$group.$slug.$run.stderr" 2>/dev/null || true
    rm -rf "$dir"
}

run_wrk() { # run_wrk GROUP LABEL RUN [CPU] [keep-alive] [ROOT]: req/s, Connection: close unless keep-alive
    local group=$1 label=$2 run=$3 cpu=${4:-} mode=${5:-close} root=${6:-$ROOT}
    local threads=2 pin=() close=(-H 'Connection: close')
    [ "$mode" = keep-alive ] && close=()
    [ "$(nproc)" -lt 2 ] && threads=1
    if [ -n "$cpu" ]; then
        pin=(taskset -c "$cpu")
        threads=1
    fi
    local req0 cpu0 rc=0 out=$WORK/wrk.$group.${mode}.$run.txt
    req0=$(nginx_requests)
    cpu0=$(nginx_cpu_ticks)
    /usr/bin/time -f '%U %S %M' -o "$WORK/wrk.time" \
        timeout -k 10 $((WRK_SECONDS + 30)) "${pin[@]}" wrk -t"$threads" -c"$MAX_TASKS" -d"${WRK_SECONDS}s" \
        --timeout 10s "${close[@]}" -s "$WORK/urls.lua" "$root" >"$out" 2>&1 || rc=$?
    local req1 cpu1 rps user sys rss
    req1=$(nginx_requests)
    cpu1=$(nginx_cpu_ticks)
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
    read -r user sys rss < <(grep -E '^[0-9.]+ [0-9.]+ [0-9]+$' "$WORK/wrk.time" | tail -1) || true
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t\t%s\t\t%s\t%.2f\t%s\n' \
        "$group" "$label" "$run" "$rc" "$WRK_SECONDS" "${user:-0}" "${sys:-0}" "${rss:-0}" \
        "$EXPECTED" "$((req1 - req0 - 1))" "$(minus "$cpu1" "$cpu0" | awk -v t="$CLK_TCK" '{ print $1 / t }')" "${rps:-0}" >>"$WORK/runs.tsv"
    log "$group/$label run $run: ${rps:-?} req/s$(grep -q 'Socket errors' "$out" && echo ", $(grep 'Socket errors' "$out" | sed 's/^ *//')")"
    cp "$out" "$WORK/keep-wrk.$group.$mode.$run.txt" 2>/dev/null || true
}

cat >"$WORK/urls.lua" <<EOF
-- wrk: one GET per request, cycling through the expected URL paths; each
-- thread starts at a different place in the list.
local paths = {}
for line in io.lines("$WORK/paths.txt") do
    paths[#paths + 1] = line
end
local threads = 0
function setup(thread)
    thread:set("offset", threads * 7919)
    threads = threads + 1
end
local i = 0
function init(args)
    i = (offset or 0) % #paths
end
function request()
    i = i % #paths + 1
    return wrk.format(nil, paths[i])
end
EOF

# --------------------------------------------------------------------------
# Machine info.

GIT_REV=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(cd "$REPO" && git status --porcelain --untracked-files=no -- src Cargo.toml 2>/dev/null)" ]; then
    GIT_REV="$GIT_REV+dirty"
fi
{
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "ringcrawl=$GIT_REV"
    echo "ringcrawl_flags=${RC_FLAGS[*]}"
    echo "nproc=$(nproc)"
    echo "uname_r=$(uname -r)"
    echo "cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
    echo "mem=$(free -g 2>/dev/null | awk '/^Mem:/ { print $2 " GiB" }')"
    echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "nginx=$(nginx -v 2>&1 | sed 's/^nginx version: //')"
    echo "wget=$(wget --version 2>/dev/null | head -1)"
    echo "wrk=$(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)"
    echo "python=$("$VENV/bin/python" --version 2>&1 || true)"
    echo "aiohttp=$("$VENV/bin/python" -c 'import aiohttp; print(aiohttp.__version__)' 2>/dev/null || true)"
    echo "spider=$(sed -n '/^name = "spider"$/{n;s/^version = "\(.*\)"/\1/p}' "$SPIDER_DIR/Cargo.lock" 2>/dev/null)"
    echo "site=$PAGES pages, $LINKS links/page, ~$PAGE_BYTES B/page, seed $SEED: $EXPECTED expected URLs, $SITE_FILES files, $((SITE_BYTES / 1024)) KiB"
    echo "runs=$RUNS"
    echo "max_tasks=$MAX_TASKS"
    echo "wrk_seconds=$WRK_SECONDS"
    [ "$GZIP" = 1 ] && echo "gzip=nginx gzip on (level 1, HTTP/1.0 too) on $GZIP_ADDR"
    [ "$HTTPS" = 1 ] && echo "https=nginx ssl on $TLS_ADDR, TLS 1.2 and 1.3, ECDSA P-256 certificate from a CA made for the run"
    for s in "${SKIPPED[@]}"; do echo "skipped=$s"; done
} >"$WORK/info.txt"
log "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"

# --------------------------------------------------------------------------
# The runs.

start_nginx auto
check_site

PEERS=()
for t in ringcrawl wget chapter spider; do has_tool "$t" && PEERS+=("$t"); done
NO_KEEP_ALIVE=0
case $RC_HELP in *--no-keep-alive*) NO_KEEP_ALIVE=1 ;; esac
NO_COMPRESSION=0
case $RC_HELP in *--no-compression*) NO_COMPRESSION=1 ;; esac
[ "$CLOSE" = 1 ] || NO_KEEP_ALIVE=0
if has_tool ringcrawl && [ "$NO_KEEP_ALIVE" = 1 ]; then
    PEERS=("${PEERS[0]}" "ringcrawl --no-keep-alive" "${PEERS[@]:1}")
fi
if [ -n "${BASELINE:-}" ]; then
    [ -x "$BASELINE" ] || die "BASELINE=$BASELINE is not an executable"
    PEERS=("${PEERS[0]}" ringcrawl-baseline "${PEERS[@]:1}")
fi
if has_tool ringcrawl && [ "$REQUISITES" = 1 ]; then
    case $RC_HELP in *--page-requisites*) PEERS=("${PEERS[0]}" "ringcrawl -p" "${PEERS[@]:1}") ;; esac
fi
for run in $(seq "$RUNS"); do
    for t in "${PEERS[@]}"; do
        run_tool peers "$t" "$run"
    done
    has_tool wire && [ "$CLOSE" = 1 ] && run_wrk peers wire "$run"
    has_tool wire && run_wrk peers "wire keep-alive" "$run" "" keep-alive
done

if [ -n "$CORES" ]; then
    for run in $(seq "$RUNS"); do
        for c in $CORES; do
            run_tool cores "ringcrawl --cores $c" "$run"
        done
    done
fi

if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    start_nginx 1 1
    check_site
    for run in $(seq "$RUNS"); do
        run_tool pinned "ringcrawl --cores 1 pinned" "$run"
        [ "$NO_KEEP_ALIVE" = 1 ] && run_tool pinned "ringcrawl --cores 1 --no-keep-alive pinned" "$run"
        has_tool wire && [ "$CLOSE" = 1 ] && run_wrk pinned "wire pinned" "$run" 0
        has_tool wire && run_wrk pinned "wire keep-alive pinned" "$run" 0 keep-alive
    done
fi
if [ "$HTTPS" = 1 ]; then
    start_nginx auto
    check_site
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$WORK/certs/ca.pem" "$TLS_ROOT")
    [ "$code" = 200 ] || die "nginx answers $code for $TLS_ROOT over TLS (want 200, with the CA)"
    EXPECTED_TXT=$WORK/expected-tls.txt
    EXPECTED=$(wc -l <"$EXPECTED_TXT")
    HTTPS_TOOLS=()
    if has_tool ringcrawl; then
        HTTPS_TOOLS+=("ringcrawl https")
        # A baseline from before https support has no --ca-cert: skip it.
        if [ -n "${BASELINE:-}" ] && "$BASELINE" --help 2>&1 | grep -q -- '--ca-cert'; then
            HTTPS_TOOLS+=("ringcrawl-baseline https")
        fi
        [ "$NO_KEEP_ALIVE" = 1 ] && HTTPS_TOOLS+=("ringcrawl https --no-keep-alive")
    fi
    has_tool spider && HTTPS_TOOLS+=("spider https")
    for run in $(seq "$RUNS"); do
        for t in "${HTTPS_TOOLS[@]}"; do
            run_tool https "$t" "$run"
        done
        has_tool wire && [ "$CLOSE" = 1 ] && run_wrk https "wire https" "$run" "" close "$TLS_ROOT"
        has_tool wire && run_wrk https "wire https keep-alive" "$run" "" keep-alive "$TLS_ROOT"
    done
    EXPECTED_TXT=$WORK/expected.txt
    EXPECTED=$(wc -l <"$EXPECTED_TXT")
fi
if [ "$GZIP" = 1 ] && has_tool ringcrawl; then
    start_nginx auto
    check_site
    enc=$(curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' --http1.0 --max-time 5 "$GZIP_ROOT" \
        | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ee]ncoding: *//p')
    [ "$enc" = gzip ] || die "the gzip server answers an HTTP/1.0 request with Content-Encoding '$enc' (want gzip)"
    for run in $(seq "$RUNS"); do
        EXPECTED_TXT=$WORK/expected.txt
        EXPECTED=$(wc -l <"$EXPECTED_TXT")
        run_tool gzip "ringcrawl plain" "$run"
        EXPECTED_TXT=$WORK/expected-gz.txt
        EXPECTED=$(wc -l <"$EXPECTED_TXT")
        run_tool gzip "ringcrawl gzip" "$run"
        [ -n "${BASELINE:-}" ] && run_tool gzip "ringcrawl-baseline gzip" "$run"
        [ "$NO_COMPRESSION" = 1 ] && run_tool gzip "ringcrawl gzip --no-compression" "$run"
    done
    EXPECTED_TXT=$WORK/expected.txt
    EXPECTED=$(wc -l <"$EXPECTED_TXT")
fi
stop_nginx

# --------------------------------------------------------------------------
# Report.

# The runs first: a report that fails must not lose them.
cp "$WORK/runs.tsv" "${RESULTS%.md}.runs.tsv"
python3 "$HERE/bench_report.py" "$WORK/info.txt" "$WORK/runs.tsv" "$WORK/keep" >"$RESULTS"
log "results: $RESULTS (every run: ${RESULTS%.md}.runs.tsv)"
cat "$RESULTS"
exit 0
}
