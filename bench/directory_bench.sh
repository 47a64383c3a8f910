#!/usr/bin/env bash
# Runs the directory benchmark and redis-benchmark's raw EVALSHA of a trivial script against the
# same Redis in one run, then prints each directory operation's best rate as a share of the raw
# rate. The raw rate is measured before and after the directory run and averaged, so load from
# other work on the box shows up as a gap between the two.
#
#   scripts/build release --target directory_bench
#   bench/directory_bench.sh
# Settings: TELOS_REDIS_PORT (16379), BENCH_MIN_TIME (2 s per benchmark), BENCH_RAW_REQUESTS
# (100000 per redis-benchmark run), DIRECTORY_BENCH (the binary; build/release/bench/
# directory_bench), BENCH_OUT (keep Google Benchmark's JSON report at this path; by default it is
# a temporary file, removed at exit). The CI smoke run (bench/smoke.py) sets the last four small.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${TELOS_REDIS_PORT:-16379}
min_time=${BENCH_MIN_TIME:-2}
raw_requests=${BENCH_RAW_REQUESTS:-100000}
bin=${DIRECTORY_BENCH:-build/release/bench/directory_bench}
if [ -n "${BENCH_OUT:-}" ]; then
  out=$BENCH_OUT
else
  out=$(mktemp /tmp/directory_bench.XXXXXX.json)
  trap 'rm -f "$out"' EXIT
fi

[ -x "$bin" ] || { echo "no $bin: scripts/build release --target directory_bench" >&2; exit 1; }
redis-cli -p "$port" ping >/dev/null || { echo "no redis on 127.0.0.1:$port" >&2; exit 1; }

sha=$(redis-cli -p "$port" SCRIPT LOAD "return 1")
raw_rate() {
  redis-benchmark -p "$port" -n "$raw_requests" -q EVALSHA "$sha" 0 | tr '\r' '\n' |
    sed -nE 's/.*: ([0-9.]+) requests per second.*/\1/p' | tail -n 1
}

echo "== redis-benchmark -p $port -n $raw_requests -q EVALSHA $sha 0   (before)"
raw_before=$(raw_rate)
echo "   $raw_before requests/s"

echo "== $bin --benchmark_min_time=$min_time"
TELOS_REDIS=redis://127.0.0.1:$port "$bin" --benchmark_min_time="$min_time" \
  --benchmark_out="$out" --benchmark_out_format=json

echo "== redis-benchmark -p $port -n $raw_requests -q EVALSHA $sha 0   (after)"
raw_after=$(raw_rate)
echo "   $raw_after requests/s"

# rates FILE: "name<TAB>ops/s" for each benchmark of a Google Benchmark JSON report that ran
# without an error (python3 rather than jq, which scripts/bootstrap does not install).
rates() {
  python3 -c '
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if not b.get("error_occurred"):
        print("%s\t%d" % (b["name"], int(b["items_per_second"])))' "$1"
}

raw=$(echo "$raw_before $raw_after" | awk '{ printf "%.0f", ($1 + $2) / 2 }')
echo
echo "raw EVALSHA (mean of before/after): $raw requests/s"
printf '%-44s %14s %8s\n' "operation (threads)" "ops/s" "ratio"
rates "$out" |
  while IFS=$'\t' read -r name rate; do
    printf '%-44s %14s %7.0f%%\n' "$name" "$rate" "$(echo "$rate $raw" | awk '{ print 100 * $1 / $2 }')"
  done
echo
echo "best per operation:"
rates "$out" | sed -E 's|/[^\t]*||' |
  sort -k1,1 -k2,2nr | awk -F'\t' -v raw="$raw" '!seen[$1]++ { printf "  %-22s %10d ops/s  %5.0f%% of raw EVALSHA\n", $1, $2, 100 * $2 / raw }'
