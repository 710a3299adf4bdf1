#!/usr/bin/env bash
# Builds flux-bench in release and runs it.
#
#   Benchmarks/run.sh [options]   every workload of every contender in 5 fresh processes each;
#                                 prints the table, writes results.json, results.md, ratios.svg
#                                 and the table in README.md. Options go to `flux-bench run`
#                                 (--reps N, --rounds N, --workloads W1,W2, --implementations …).
#   Benchmarks/run.sh smoke       every workload once at a tiny size; non-zero on a wrong counter.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

swift build -c release --package-path "$here" --product flux-bench >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)/flux-bench"

if [[ "${1:-}" == "smoke" ]]; then
  exec "$bin" smoke
fi
[[ "${1:-}" == "run" ]] && shift

export FLUX_BENCH_TOOLCHAIN="$(swift --version 2>/dev/null | head -n 1)"
"$bin" run --json "$here/results.json" "$@" | tee "$here/results.md"
python3 "$here/chart.py" "$here/results.json" --svg "$here/ratios.svg" \
  --table "$here/results.md" --readme "$here/README.md"
