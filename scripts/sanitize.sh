#!/usr/bin/env bash
# Runs the GPU tests' kernels and the demo under compute-sanitizer's four tools (memcheck,
# racecheck, synccheck, initcheck) and prints one summary line per tool and program.
# Needs a GPU and a build (default ./build; another with BUILD=dir). Exits 1 when a tool
# reports an error. Tests whose sizes make them too slow under the sanitizer (a sanitized
# kernel runs 10-100x slower) are left out: the 2^28-element and 32-GiB tests, the
# autotuner's (its candidates run in a child process) and the SM-partition ones (green
# contexts). Set FILTER to a gtest filter to choose others, TOOLS to run fewer tools,
# LOG_DIR to keep each run's full output, and LIMIT for the seconds one run may take
# (default 480; a run past it is stopped and reported as rc=124).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
tools=${TOOLS:-memcheck racecheck synccheck initcheck}
log_dir=${LOG_DIR:-$(mktemp -d)}
limit=${LIMIT:-480}
filter=${FILTER:-"-AutotuneGpu.*:GreenContextGpu.*:Seed000Full.*:GpuRuntime.CountMismatchesOn2To28Elements:GpuRuntime.SixtyFourBitIndexing:GpuRuntime.CopiesBetweenTwoGpus:PersistentGpu.PaddedSumLargeVaryingBound"}
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
[ -x "$sanitizer" ] || { echo "compute-sanitizer not found (CUDA_HOME/bin)"; exit 2; }
mkdir -p "$log_dir"
# Every kernel compiles anew (no cubin from a run without the sanitizer) and runs on the GPU.
export TESSEL_SKIP_CACHE=1
unset TESSEL_INTERPRET

status=0
run() {  # run <tool> <name> <command...>
  local tool=$1 name=$2
  shift 2
  local log="$log_dir/$tool-$name.log"
  # tessel checks every driver call's status itself, and tests provoke failing calls on
  # purpose (a missing kernel name): the sanitizer reports only what kernels do.
  timeout "$limit" "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 --report-api-errors no "$@" >"$log" 2>&1
  local rc=$?
  local summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  local tests
  tests=$(grep -E "^\[  (PASSED|FAILED)  \]" "$log" | tr '\n' ' ')
  printf '%-10s %-12s rc=%-3s %s %s\n' "$tool" "$name" "$rc" "${summary:-no summary}" "$tests"
  if [ "$rc" -ne 0 ]; then status=1; fi
}

for tool in $tools; do
  run "$tool" gpu-tests "$build/tests/tessel_gpu_tests" --gtest_filter="$filter" --gtest_brief=1
  run "$tool" demo "$build/examples/tessel_demo"
done
echo "logs: $log_dir"
exit $status
