#!/usr/bin/env bash
# Builds the PyTorch extension example (examples/torch_extension) against a tessel build
# tree and runs its checks: torch_interop_test (<tessel/torch.hpp>), test_rms_norm.py
# (torch.ops.tessel_examples.rms_norm against torch; on CUDA too where torch sees a GPU,
# with torch.cuda.graph capture and replay) and test_dot_ops.py (matmul_bias_gelu and
# grouped_matmul against torch), then, on a GPU, bench/torch_op_vs_torch.py (rms_norm against
# torch.nn.functional.rms_norm) and bench/torch_dot_vs_torch.py (the dot ops against torch's
# matmul with its epilogue and its grouped mm), each timed in the same run.
#
# Usage: bash scripts/torch_check.sh [--build DIR] [--python PY] [--cuda] [--no-bench]
#                                    [--skip-without-torch]
#   --build DIR   tessel's build tree (default $BUILD, else build); configured (Release,
#                 the library alone) when it has no CMakeCache.txt; its library target is
#                 brought up to date.
#                 The extension is built in DIR/torch_extension.
#   --python PY   the Python whose torch to build and test with (default $TESSEL_PYTHON,
#                 else python3).
#   --cuda        a GPU is required: fail when torch sees none (the CUDA tests would skip).
#   --no-bench    no timing.
#   --skip-without-torch  exit 77 (ctest's skip) when PY cannot import torch; else that fails.
# On the GPU machine: bash scripts/torch_check.sh --build build-gpu --cuda
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD:-build}
python=${TESSEL_PYTHON:-python3}
need_cuda=0 bench=1 skip_without_torch=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --cuda) need_cuda=1; shift ;;
    --no-bench) bench=0; shift ;;
    --skip-without-torch) skip_without_torch=1; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "torch_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "torch_check: $*"; }
fail() { echo "torch_check: FAILED: $*" >&2; exit 1; }

if ! "$python" -c 'import torch' >/dev/null 2>&1; then
  msg="'$python' cannot import torch (pass --python or set TESSEL_PYTHON to a Python with torch)"
  if [ "$skip_without_torch" = 1 ]; then say "skipped: $msg"; exit 77; fi
  fail "$msg"
fi
read -r torch_version cuda_available < <("$python" -c \
  'import torch; print(torch.__version__, int(torch.cuda.is_available()))' 2>/dev/null)
say "torch $torch_version from $python; CUDA device visible: $([ "$cuda_available" = 1 ] && echo yes || echo no)"
if [ "$need_cuda" = 1 ] && [ "$cuda_available" != 1 ]; then
  fail "--cuda given but torch sees no CUDA device (is this a CPU build of torch? torch.version.cuda: $("$python" -c 'import torch; print(torch.version.cuda)'))"
fi

build=$(mkdir -p "$build" && cd "$build" && pwd)
ext=$build/torch_extension
mkdir -p "$ext"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring tessel in $build (log: $ext/tessel-configure.log)"
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_BUILD_BENCH=OFF -DTESSEL_BUILD_EXAMPLES=OFF >"$ext/tessel-configure.log" 2>&1 ||
    { tail -30 "$ext/tessel-configure.log"; fail "configuring tessel"; }
fi
say "building tessel's library in $build"
cmake --build "$build" --target tessel >"$ext/tessel-build.log" 2>&1 ||
  { tail -30 "$ext/tessel-build.log"; fail "building tessel (log: $ext/tessel-build.log)"; }

# The extension uses tessel's compiler (and ccache where present).
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
args=(-S "$root/examples/torch_extension" -B "$ext" -DCMAKE_BUILD_TYPE=Release -Dtessel_DIR="$build"
      -DTESSEL_PYTHON="$python")
[ -f "$ext/CMakeCache.txt" ] || args+=("${generator[@]}")
[ -n "$cxx" ] && args+=(-DCMAKE_CXX_COMPILER="$cxx")
# Where tessel found its own dependencies (xxHash, dlpack, ...): its package needs them too.
prefix=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$prefix" ] && args+=(-DCMAKE_PREFIX_PATH="$prefix")
command -v ccache >/dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
say "building examples/torch_extension in $ext"
# Configured once per Python (finding torch takes seconds); the build re-runs CMake when the
# project's files change.
if ! grep -qxF "TESSEL_PYTHON:STRING=$python" "$ext/CMakeCache.txt" 2>/dev/null ||
   { [ ! -f "$ext/build.ninja" ] && [ ! -f "$ext/Makefile" ]; }; then
  cmake "${args[@]}" >"$ext/configure.log" 2>&1 ||
    { tail -40 "$ext/configure.log"; fail "configuring examples/torch_extension (log: $ext/configure.log)"; }
fi
cmake --build "$ext" >"$ext/build.log" 2>&1 ||
  { tail -40 "$ext/build.log"; fail "building examples/torch_extension (log: $ext/build.log)"; }

lib=$ext/libtessel_torch_examples.so
[ -f "$lib" ] || fail "$lib was not built"
# A second C++ runtime inside the extension (a compiler that links libstdc++ statically)
# breaks streams and exceptions shared with torch; CMakeLists.txt links the shared one.
if ! readelf -d "$lib" | grep -q 'NEEDED.*\[libstdc++\.so'; then
  fail "$lib does not load libstdc++.so: it carries a static copy of the C++ runtime, which breaks the strings, streams and exceptions it shares with torch (see examples/torch_extension/CMakeLists.txt)"
fi
status=0
say "running torch_interop_test"
"$ext/torch_interop_test" || status=1
say "running test_rms_norm.py"
TESSEL_TORCH_REQUIRE_CUDA=$need_cuda "$python" "$root/examples/torch_extension/test_rms_norm.py" "$lib" ||
  status=1
say "running test_dot_ops.py"
TESSEL_TORCH_REQUIRE_CUDA=$need_cuda "$python" "$root/examples/torch_extension/test_dot_ops.py" "$lib" ||
  status=1
if [ "$bench" = 1 ] && [ "$cuda_available" = 1 ]; then
  say "timing against torch.nn.functional.rms_norm"
  "$python" "$root/bench/torch_op_vs_torch.py" "$lib" --device cuda || status=1
  say "timing the fused matmul + bias + gelu and the grouped GEMM against torch"
  "$python" "$root/bench/torch_dot_vs_torch.py" "$lib" || status=1
fi
[ $status = 0 ] && say "all checks passed" || fail "see the failures above"
