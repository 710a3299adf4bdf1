#!/bin/sh
# Exhaustive checks of Flux's two lock-free protocols with the spin model checker.
#
#   ./check.sh [quick|safety|liveness|all]      (default: all)
#
# quick: the safety checks of the smaller thread mixes, with a verifier built without
# optimization (it builds in seconds): what continuous integration runs, in about a minute.
#
# Needs spin (Debian: apt-get install spin) and a C compiler. Runs one check at a time; the
# largest (fast_lane.pml, WITH_ABANDON + WITH_MIDDLEWARE, liveness) takes about 3 minutes and
# 7 GB. Exits non-zero if any check fails, keeping its counterexample in build/failed/;
# replay one with: spin -t -k build/failed/<name>.trail -p -g -l <same -D flags> <model>.pml
set -eu
cd "$(dirname "$0")"
mkdir -p build
cd build
failed=0

# check MODEL "DEFINES" "PAN COMPILE FLAGS" "PAN RUN FLAGS"
check() {
  echo "== $1 [$2] pan $4"
  rm -f ./*.trail
  # shellcheck disable=SC2086
  spin $2 -a "../$1" > /dev/null
  # shellcheck disable=SC2086
  ${CC:-gcc} ${OPTIMIZE:--O2} -w $3 -o pan pan.c
  # shellcheck disable=SC2086
  ./pan $4 > pan.out 2>&1 || true
  grep -E "errors:|states, stored|violated|acceptance cycle|pan:[0-9]|out of memory|max search depth" pan.out || true
  # A search that stopped early (out of memory, or cut at the depth limit, -m) finds no error,
  # and proves nothing either.
  if ! grep -q "errors: 0" pan.out || grep -q "out of memory\|Search not completed\|max search depth too small" pan.out; then
    echo "   FAILED: the search did not complete with 0 errors"; failed=1
  fi
  if ls ./*.trail > /dev/null 2>&1; then
    name="$(echo "${1%.pml} $2" | sed 's/ *$//; s/[^A-Za-z0-9_]\{1,\}/_/g')"
    mkdir -p failed
    for t in ./*.trail; do mv "$t" "failed/$name.trail"; done
    echo "   FAILED: counterexample in build/failed/$name.trail"; failed=1
  fi
}

safety() {
  # fast_lane.pml: two dispatchers (one commit dispatches again from inside), plus the threads
  # named by the defines.
  for d in "" "-DWITH_FREE" "-DWITH_MIDDLEWARE" "-DWITH_MIDDLEWARE -DREAD_ONLY -DWITH_FREE" \
           "-DWITH_ABANDON" "-DWITH_MIDDLEWARE -DWITH_FREE" "-DWITH_ABANDON -DWITH_FREE" \
           "-DWITH_ABANDON -DWITH_MIDDLEWARE"; do
    check fast_lane.pml "$d" "-DSAFETY -DNOCLAIM" "-n -m400000"
  done
  # snapshot_cell.pml: two readers and an owner; REENTRANT registers from inside a walk;
  # FOREVER has the owner change the registry forever (and boxes reused).
  for d in "" "-DREENTRANT" "-DFOREVER"; do
    check snapshot_cell.pml "$d" "-DSAFETY -DNOCLAIM" "-n -m400000"
  done
}

liveness() {
  for d in "-DWITH_MIDDLEWARE -DWITH_FREE" "-DWITH_ABANDON -DWITH_FREE" "-DWITH_ABANDON -DWITH_MIDDLEWARE"; do
    check fast_lane.pml "$d" "-DNFAIR=3" "-a -f -n -m400000"
  done
  for n in readersFinish nothingRetiredForever; do
    check snapshot_cell.pml "-DFOREVER" "-DNFAIR=3" "-a -f -n -m400000 -N $n"
  done
}

quick() {
  OPTIMIZE=-O0
  for d in "" "-DWITH_FREE" "-DWITH_MIDDLEWARE" "-DWITH_MIDDLEWARE -DREAD_ONLY -DWITH_FREE" "-DWITH_ABANDON"; do
    check fast_lane.pml "$d" "-DSAFETY -DNOCLAIM" "-n -m400000"
  done
  for d in "" "-DREENTRANT"; do
    check snapshot_cell.pml "$d" "-DSAFETY -DNOCLAIM" "-n -m400000"
  done
}

case "${1:-all}" in
  quick) quick ;;
  safety) safety ;;
  liveness) liveness ;;
  all) safety; liveness ;;
  *) echo "usage: $0 [quick|safety|liveness|all]" >&2; exit 2 ;;
esac
exit $failed
