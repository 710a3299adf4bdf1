#!/usr/bin/env bash
# Builds flux-bench in release and runs it.
#
#   Benchmarks/run.sh [options]   every workload of every contender in 5 fresh processes each;
#                                 prints the table, writes results.json, results.md, ratios.svg
#                                 and the table in README.md. Options go to `flux-bench run`
#                                 (--reps N, --rounds N, --workloads W1,W2, --implementations …).
#   Benchmarks/run.sh smoke       every workload once at a tiny size, then the Flux scaling curves at
#                                 100 and 10,000; non-zero on a wrong counter or a curve that grows
#                                 faster than linear.
#   Benchmarks/run.sh scaling     the scaling curves of Flux and OpenCombine, 3 fresh processes per
#                                 point; writes scaling.json, scaling.md, scaling.svg and the table
#                                 in README.md. Options go to `flux-bench scaling`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

swift build -c release --package-path "$here" --product flux-bench >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)/flux-bench"

if [[ "${1:-}" == "smoke" ]]; then
  exec "$bin" smoke
fi
[[ "${1:-}" == "run" ]] && shift

export FLUX_BENCH_TOOLCHAIN="$(swift --version 2>/dev/null | head -n 1)"
if [[ "${1:-}" == "scaling" ]]; then
  shift
  "$bin" scaling --json "$here/scaling.json" "$@" | tee "$here/scaling.md"
  exec python3 "$here/scaling.py" "$here/scaling.json" --svg "$here/scaling.svg" \
    --table "$here/scaling.md" --readme "$here/README.md"
fi
"$bin" run --json "$here/results.json" "$@" | tee "$here/results.md"
python3 "$here/chart.py" "$here/results.json" --svg "$here/ratios.svg" \
  --table "$here/results.md" --readme "$here/README.md"
