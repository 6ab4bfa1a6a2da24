#!/usr/bin/env bash
# Everything a GPU machine checks before a landing, in one command: builds tessel
# (Release, in BUILD, default ./build-gpu), then runs the GPU test suite (ctest -L gpu)
# and, alongside it, compute-sanitizer's four tools (scripts/sanitize.sh, one process per
# tool), then the fuzzer's GPU batch (FUZZ_COUNT programs, default 10000, GPU against the
# interpreter). Logs go to OUT_DIR (default /tmp/tessel-device); the last lines printed
# are the summaries. Stages: `suite`, `sanitize`, `fuzz` as arguments (default all).
# CMAKE_ARGS passes extra configure arguments (e.g. -DCMAKE_PREFIX_PATH=...); FUZZ_MINUTES
# stops the fuzzer starting programs after that many minutes (it reports how many ran).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build-gpu}
out=${OUT_DIR:-/tmp/tessel-device}
count=${FUZZ_COUNT:-10000}
stages=${*:-suite sanitize fuzz}
mkdir -p "$out"
want() { [[ " $stages " == *" $1 "* ]]; }

# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null || exit 1
cmake --build "$build" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }

pids=()
if want sanitize; then
  for tool in memcheck racecheck synccheck initcheck; do
    BUILD=$build TOOLS=$tool LOG_DIR=$out/sanitizer bash scripts/sanitize.sh >"$out/sanitize-$tool.txt" 2>&1 &
    pids+=($!)
  done
fi
status=0
if want suite; then
  ctest --test-dir "$build" -L gpu -j8 --output-on-failure --timeout 300 >"$out/gpu-tests.log" 2>&1 || status=1
fi
if want fuzz; then
  "$build/tests/fuzz/tessel_fuzz" --gpu --count "$count" --jobs "$(nproc)" --minutes "${FUZZ_MINUTES:-0}" \
    >"$out/fuzz-gpu.log" 2>&1 || status=1
fi
for p in "${pids[@]}"; do wait "$p" || status=1; done

echo "== summary ($(git rev-parse --short HEAD))"
want suite && grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)" "$out/gpu-tests.log"
want fuzz && tail -3 "$out/fuzz-gpu.log"
want sanitize && cat "$out"/sanitize-*.txt | grep -v "^logs:"
exit $status
