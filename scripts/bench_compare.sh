#!/usr/bin/env bash
# Before/after figures in one device run: builds tessel at an old commit and at this tree
# (Release), runs bench/elementwise_bench, bench/norms_bench and bench/persistent_bench of
# both builds interleaved (old, new, old, new: both see the same thermal conditions), and
# prints per benchmark row the old value, the new one and the ratio of new speed to old
# (scripts/bench_compare.py: bandwidth new/old, time old/new; rows below 0.98 flagged).
#
#   bash scripts/bench_compare.sh [--old COMMIT] [--old-src DIR] [--work DIR] [--rounds N]
#                                 [--benches elementwise_bench,norms_bench,persistent_bench]
#                                 [--norms-args "--kernels softmax,rms_norm"] [--build-only]
#   bash scripts/bench_compare.sh --parse-only OLD_OUT_DIR NEW_OUT_DIR
#   bash scripts/bench_compare.sh [--old COMMIT] --export-old DIR
#
# --old COMMIT   the old commit (default b9815a4), checked out with `git worktree add` under
#                the work directory; --old-src DIR uses a source tree of it instead (made
#                elsewhere with `git archive b9815a4 | tar -x -C DIR`, for a copy of the
#                tree without its git directory).
# --work DIR     build directories and outputs (default /tmp/tessel-bench-compare); the
#                builds are reused by later runs (ninja rebuilds what changed).
# --rounds N     runs of each benchmark per build (default 2); a row's value is its best.
# --build-only   configure and build both, run nothing (a first call within a time limit).
# --parse-only   only compares saved outputs (<bench>.<round>.txt in each directory).
# --export-old   writes the old commit's sources to DIR (git archive) and exits: for a
#                machine that gets a copy of this tree without its git directory, export
#                to an ignored path here (e.g. build-old-src) and pass --old-src there.
# Dependencies: CMAKE_PREFIX_PATH (and CUDA_HOME) from the environment are passed to both
# configurations; TESSEL_BENCH_CMAKE_ARGS adds cmake arguments to both.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

old=b9815a4
old_src=""
work=/tmp/tessel-bench-compare
rounds=2
benches=elementwise_bench,norms_bench,persistent_bench
norms_args=""
build_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --old) old="$2"; shift 2 ;;
    --old-src) old_src="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --benches) benches="$2"; shift 2 ;;
    --norms-args) norms_args="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --export-old)
      mkdir -p "$2"
      git -C "$root" archive "$old" | tar -x -C "$2"
      echo "wrote the sources of $old to $2" >&2
      exit 0 ;;
    --parse-only)
      [[ $# -ge 3 ]] || { echo "--parse-only needs OLD_OUT_DIR NEW_OUT_DIR" >&2; exit 2; }
      exec python3 "$here/bench_compare.py" --old-dir "$2" --new-dir "$3" ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

mkdir -p "$work"
[[ -n "$old_src" ]] && old_src="$(cd "$old_src" && pwd)"
if [[ -z "$old_src" ]]; then
  old_src="$work/src-$old"
  if [[ ! -e "$old_src" ]]; then
    git -C "$root" worktree add --detach "$old_src" "$old" >/dev/null ||
      { echo "cannot check out $old (no git directory? pass --old-src DIR)" >&2; exit 1; }
  fi
fi

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
[[ -n "${CMAKE_PREFIX_PATH:-}" ]] && cmake_args+=("-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH")
# shellcheck disable=SC2206
[[ -n "${TESSEL_BENCH_CMAKE_ARGS:-}" ]] && cmake_args+=($TESSEL_BENCH_CMAKE_ARGS)
IFS=, read -r -a bench_list <<<"$benches"

build() {  # build <source> <build dir>
  echo "== building $1 in $2" >&2
  cmake -S "$1" -B "$2" "${cmake_args[@]}" >"$2.configure.log" 2>&1 ||
    { cat "$2.configure.log" >&2; exit 1; }
  cmake --build "$2" --target "${bench_list[@]}" tessel_bench_worker >"$2.build.log" 2>&1 ||
    { tail -50 "$2.build.log" >&2; exit 1; }
}
mkdir -p "$work/build-old" "$work/build-new"
build "$old_src" "$work/build-old"
build "$root" "$work/build-new"
[[ "$build_only" == 1 ]] && { echo "built: $work/build-old, $work/build-new" >&2; exit 0; }

args_of() {  # the arguments each benchmark runs with
  case "$1" in
    persistent_bench) echo "--json" ;;
    norms_bench) echo "$norms_args" ;;
    *) echo "" ;;
  esac
}
out_old="$work/out-old" out_new="$work/out-new"
rm -rf "$out_old" "$out_new"
mkdir -p "$out_old" "$out_new"
for bench in "${bench_list[@]}"; do
  for ((r = 1; r <= rounds; ++r)); do
    for side in old new; do
      out="$work/out-$side/$bench.$r.txt"
      echo "== $bench round $r: $side" >&2
      # shellcheck disable=SC2046
      "$work/build-$side/bench/$bench" $(args_of "$bench") >"$out" 2>"$out.stderr" ||
        echo "   $bench ($side) exited with $? (stderr: $out.stderr)" >&2
    done
  done
done
python3 "$here/bench_compare.py" --old-dir "$out_old" --new-dir "$out_new"
