#!/usr/bin/env bash
# The instruction budget: each Flux workload at a small fixed size under callgrind, in a release
# build, compared with callgrind-budget.txt. Fails when any workload costs more than 5% over its
# budget. Instruction counts do not depend on the machine's load, unlike times.
#
#   Benchmarks/callgrind.sh                 check every workload against the budget
#   Benchmarks/callgrind.sh --print         print the counts, check nothing
#   Benchmarks/callgrind.sh W3 W6i          only these workloads
#   Benchmarks/callgrind.sh --print --contender baseline    another contender's counts
#
# Each workload runs twice, `flux-bench child W flux --rounds 1 --size S` and then at 2S; the
# difference of the two totals, divided by the difference of the indices run (1.2 S: the warm-up
# and allocation-counting rounds are a tenth of the size each), is the cost of one index with
# the process's start, the setup and the exit subtracted. Updating the budget is a deliberate
# change, with its reason in the commit message.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
budget="$here/callgrind-budget.txt"
tolerance=1.05

mode=check
contender=flux
workloads=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --print) mode=print ;;
    --contender) contender="$2" mode=print && shift ;;
    *) workloads+=("$1") ;;
  esac
  shift
done

swift build -c release --package-path "$here" --product flux-bench >&2
built="$(swift build -c release --package-path "$here" --show-bin-path)/flux-bench"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# Valgrind 3.19 cannot read the DWARF that Swift 6 writes ("possibly corrupted debuginfo"): it
# runs a copy without the debug information. The instructions are the same.
bin="$scratch/flux-bench"
strip --strip-debug -o "$bin" "$built"

if [[ ${#workloads[@]} -eq 0 ]]; then
  mapfile -t workloads < <(awk '!/^#/ && NF { print $1 }' "$budget")
fi

# The total instructions of one child run.
instructions() {
  local workload="$1" size="$2" out="$scratch/callgrind.out"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" child "$workload" "$contender" --rounds 1 --size "$size" \
    >"$scratch/stdout" 2>"$scratch/stderr" || {
    echo "FAIL $workload: the child failed at size $size" >&2
    cat "$scratch/stdout" "$scratch/stderr" >&2
    return 1
  }
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# The size a workload runs at: its indices cost from a few dozen to a few thousand instructions.
size_of() {
  case "$1" in
    W5 | W9) echo 200 ;;
    W7) echo 20 ;;
    W13 | W14) echo 100 ;;
    *) echo 2000 ;;
  esac
}

failures=0
printf '%-6s %12s %12s %8s\n' workload "instr/index" budget ratio
for workload in "${workloads[@]}"; do
  size="$(size_of "$workload")"
  small="$(instructions "$workload" "$size")" || { failures=$((failures + 1)); continue; }
  large="$(instructions "$workload" $((2 * size)))" || { failures=$((failures + 1)); continue; }
  # W9 subscribes `size` observers in one round; the others run 1.2 × size indices.
  indices="$(awk -v s="$size" -v w="$workload" 'BEGIN { print (w == "W9") ? s : 1.2 * s }')"
  cost="$(awk -v a="$small" -v b="$large" -v n="$indices" 'BEGIN { printf "%.1f", (b - a) / n }')"
  allowed="$(awk -v w="$workload" '$1 == w { print $2 }' "$budget")"
  if [[ "$mode" == print || -z "$allowed" ]]; then
    printf '%-6s %12s %12s %8s\n' "$workload" "$cost" "${allowed:-–}" –
    if [[ "$mode" == check ]]; then
      echo "FAIL $workload: no budget in $budget" >&2
      failures=$((failures + 1))
    fi
    continue
  fi
  ratio="$(awk -v c="$cost" -v b="$allowed" 'BEGIN { printf "%.3f", c / b }')"
  verdict=ok
  if awk -v r="$ratio" -v t="$tolerance" 'BEGIN { exit !(r > t) }'; then
    verdict="OVER BUDGET"
    failures=$((failures + 1))
  fi
  printf '%-6s %12s %12s %8s %s\n' "$workload" "$cost" "$allowed" "$ratio" "$verdict"
done
if [[ $failures -gt 0 ]]; then
  echo "$failures workload(s) over budget or failed (budget: $budget, tolerance ${tolerance}×)" >&2
  exit 1
fi
