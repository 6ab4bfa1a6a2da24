#!/usr/bin/env python3
"""torch.ops.tessel_examples.rms_norm (examples/torch_extension) against
torch.nn.functional.rms_norm, called from Python on the same tensors in one run.

Both are timed as a user calls them (the op's host path included: dispatch, tessel's
argument checks and launch). CUDA: torch.cuda.Event around --iters back-to-back calls,
--warmup calls first, the median over --rounds rounds of the mean per call; CPU (the tessel
interpreter against torch's CPU kernel): time.perf_counter the same way. Each row also
checks that the two results agree (max |difference|). Prints a table:

  shape, dtype, tessel us, torch us, speedup (torch us / tessel us), tessel GB/s
  (x read and y written once, weight once)

Usage:
  python3 bench/torch_op_vs_torch.py LIBRARY [--device cuda|cpu] [--dtypes bf16,f32]
                                     [--shapes 4096x4096,...] [--iters N] [--rounds R]
LIBRARY is libtessel_torch_examples.so (examples/torch_extension, scripts/torch_check.sh).
"""

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

EPS = 1e-6
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
CUDA_SHAPES = "1x4096,64x4096,4096x4096,16384x4096,8192x8192,32768x1024"
CPU_SHAPES = "64x1024,1024x1024,2048x4096"


def torch_rms_norm(x, w):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, EPS)
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + EPS).to(x.dtype) * w


def time_us(fn, device, iters, rounds, warmup):
    """Median over rounds of the mean time of one call, in microseconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(rounds):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1e3 / iters)
        else:
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            samples.append((time.perf_counter() - t0) * 1e6 / iters)
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("library")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                   choices=["cuda", "cpu"])
    p.add_argument("--dtypes", default="bf16,f32")
    p.add_argument("--shapes", default=None, help=f"MxN,... (default cuda {CUDA_SHAPES}; cpu {CPU_SHAPES})")
    p.add_argument("--iters", type=int, default=None, help="calls per round (default cuda 50, cpu 3)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default cuda 7, cpu 3)")
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_op_vs_torch: torch sees no CUDA device (use --device cpu)")
    torch.ops.load_library(a.library)
    op = torch.ops.tessel_examples.rms_norm
    cuda = a.device == "cuda"
    shapes = [tuple(int(v) for v in s.split("x")) for s in (a.shapes or (CUDA_SHAPES if cuda else CPU_SHAPES)).split(",")]
    iters = a.iters or (50 if cuda else 3)
    rounds = a.rounds or (7 if cuda else 3)
    name = torch.cuda.get_device_name() if cuda else "CPU (tessel interpreter)"
    print(f"rms_norm, eps {EPS}, on {name}; torch {torch.__version__}; median of {rounds} rounds "
          f"of {iters} calls")
    header = f"{'shape':>12} {'dtype':>5} {'tessel us':>10} {'torch us':>10} {'speedup':>8} " \
             f"{'tessel GB/s':>11} {'max |diff|':>10}"
    print(header)
    print("-" * len(header))
    speedups = []
    for dname in a.dtypes.split(","):
        dtype = DTYPES[dname]
        for m, n in shapes:
            x = torch.randn(m, n, device=a.device).to(dtype)
            w = (1 + 0.5 * torch.randn(n, device=a.device)).to(dtype)
            diff = (op(x, w, EPS).float() - torch_rms_norm(x, w).float()).abs().max().item()
            t_tessel = time_us(lambda: op(x, w, EPS), a.device, iters, rounds, a.warmup)
            t_torch = time_us(lambda: torch_rms_norm(x, w), a.device, iters, rounds, a.warmup)
            gbs = (2 * m * n + n) * x.element_size() / (t_tessel * 1e-6) / 1e9
            speedups.append(t_torch / t_tessel)
            print(f"{f'{m}x{n}':>12} {dname:>5} {t_tessel:10.1f} {t_torch:10.1f} "
                  f"{t_torch / t_tessel:7.2f}x {gbs:11.1f} {diff:10.2g}", flush=True)
    print(f"geomean speedup (torch time / tessel time): {statistics.geometric_mean(speedups):.2f}x")


if __name__ == "__main__":
    main()
