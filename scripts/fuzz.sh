#!/usr/bin/env bash
# Fuzz the pure parsers for a bounded time each, one target after another.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 60; TARGET defaults to all of
# response_head body_framing links links_differential url_normalize
# content_decode charset_links sitemap dns_wire robots warc_read
# (fuzz/fuzz_targets/).
# Needs a nightly toolchain; installs cargo-fuzz from crates.io if missing.
# Each target starts from fuzz/seeds/<target>/ (committed) plus whatever
# fuzz/corpus/<target>/ (not committed) has gathered in earlier runs, and
# stops by itself after SECONDS_PER_TARGET (libFuzzer -max_total_time).
#
# Prints per target the runs executed, the seconds fuzzed and "no crash" or
# the path of the crash artefact (fuzz/artifacts/<target>/...), then exits 1
# if any target crashed. Full libFuzzer output: fuzz/target/fuzz-logs/.
#
# Environment:
#   FUZZ_TOOLCHAIN   toolchain for cargo (default: nightly)
#   FUZZ_ARGS        extra libFuzzer flags, e.g. "-max_len=16384"
# Replay a crash:  cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>
set -euo pipefail

secs="${1:-60}"
if ! [[ "$secs" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]" >&2
    exit 2
fi
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(response_head body_framing links links_differential url_normalize content_decode charset_links sitemap dns_wire robots warc_read)
fi

cd "$(dirname "$0")/.."
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
cargo "+$toolchain" --version >/dev/null

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz not found: installing it from crates.io" >&2
    cargo install --locked cargo-fuzz
fi

for t in "${targets[@]}"; do
    if [ ! -f "fuzz/fuzz_targets/$t.rs" ]; then
        echo "no such fuzz target: $t (see fuzz/fuzz_targets/)" >&2
        exit 2
    fi
done

# Build every target first, then run the built binaries as `cargo fuzz run`
# would: build time is not taken from the fuzzing time, and a source edit in
# the middle of the runs does not trigger a rebuild between targets.
for t in "${targets[@]}"; do
    cargo "+$toolchain" fuzz build "$t"
done
triple=$(rustc "+$toolchain" -vV | sed -n 's/^host: //p')
bindir="fuzz/target/$triple/release"

logs=fuzz/target/fuzz-logs
mkdir -p "$logs"
failed=0
summary=()
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    log="$logs/$t.log"
    echo "== $t: fuzzing for ${secs}s (log: $log)" >&2
    start=$(date +%s)
    status=0
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    "$bindir/$t" -artifact_prefix="fuzz/artifacts/$t/" \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 ${FUZZ_ARGS:-} \
        "fuzz/corpus/$t" "fuzz/seeds/$t" >"$log" 2>&1 || status=$?
    elapsed=$(($(date +%s) - start))

    runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    if [ -z "$runs" ]; then
        runs=$(sed -n 's/^Done \([0-9]*\) runs in.*/\1/p' "$log" | tail -n 1)
    fi
    fuzzed=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    artefact=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | tail -n 1)

    if [ "$status" -eq 0 ]; then
        result="no crash"
    else
        failed=1
        if [ -n "$artefact" ]; then
            result="CRASH: $artefact"
        else
            result="FAILED (exit $status, no artefact; see $log)"
        fi
        # The panic message and the top of the stack, for the impatient.
        grep -m 1 -A 3 -E "panicked at|ERROR: (libFuzzer|AddressSanitizer)" "$log" >&2 || true
    fi
    line=$(printf '%-14s runs %-12s %5ss  %s' "$t" "${runs:-?}" "${fuzzed:-$elapsed}" "$result")
    echo "$line" >&2
    summary+=("$line")
done

echo
echo "fuzzing summary (${secs}s per target):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
