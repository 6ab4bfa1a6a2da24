#!/usr/bin/env bash
# The main job: the seed programs and a short demo, on the GPU if present, otherwise on
# the CPU interpreter. Extra arguments go to tessel_demo (e.g. --seed-sizes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh tessel_demo tessel_bench_worker  # the library, the demo and the tuner's worker (the tests: scripts/test.sh)
./build/examples/tessel_demo "$@"
