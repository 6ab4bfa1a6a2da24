#!/usr/bin/env python3
"""tessel's fused matmul + bias + gelu and grouped GEMM (examples/torch_extension/dot_ops.cpp)
against torch on the same tensors, called from Python in one run on the GPU.

Fused epilogue, bfloat16 [M, K] @ [K, N] + bias [N], gelu's tanh form:
  tessel   torch.ops.tessel_examples.matmul_bias_gelu, best of a few pinned configs
  eager    F.gelu(x @ y + bias, approximate="tanh"): torch's matmul, then its epilogue
  addmm    F.gelu(torch.addmm(bias, x, y), approximate="tanh"): the bias in cuBLASLt's
           epilogue, gelu a kernel of its own
  compile  torch.compile of the eager form (inductor: cuBLAS, then one fused Triton kernel)
Grouped GEMM (a mixture of experts), bfloat16 x [E * rows, K], w [E, K, N] (each expert's
[N, K] weight transposed, as torch._grouped_mm takes it):
  tessel   torch.ops.tessel_examples.grouped_matmul (the row count on the GPU)
  grouped  torch._grouped_mm(x, w, offs) where torch has it
  loop     one torch.mm per expert

Timing: torch.cuda.Event around --iters back-to-back calls after --warmup, the median over
--rounds rounds of the mean per call (bench/torch_op_vs_torch.py's time_us). Each row checks
the results against torch's (max |difference| relative to max |torch|). Prints TFLOP/s per
case and the speedup of tessel over each peer (peer time / tessel time).

Usage: python3 bench/torch_dot_vs_torch.py LIBRARY [--iters N] [--rounds R]
                                          [--shapes 4096x4096x4096,...] [--no-compile]
LIBRARY is libtessel_torch_examples.so (examples/torch_extension, scripts/torch_check.sh).
"""

import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_op_vs_torch import time_us  # noqa: E402

# The best of dot_bench's fused configs on the H200 (two programs per SM at 128x128x64 on 4
# warps, and persistent-interleaved ones, came out slower there).
FUSED_CONFIGS = [
    '{"block_sizes":[128,256,64],"num_warps":8,"num_stages":4}',
    '{"block_sizes":[128,256,64],"num_warps":8,"num_stages":4,"l2_groupings":[8]}',
    '{"block_sizes":[128,256,64],"num_warps":8,"num_stages":4,"pid_type":"persistent_blocked"}',
    '{"block_sizes":[256,128,64],"num_warps":8,"num_stages":3,"l2_groupings":[8]}',
    '{"block_sizes":[128,256,64],"num_warps":8,"num_stages":4,"l2_groupings":[8],'
    '"warp_specialize":true}',
]
# block_m, then the N and K blocks, warps and stages.
GROUPED_CONFIGS = [
    (128, '{"block_sizes":[256,64],"num_warps":8,"num_stages":4}'),
    (128, '{"block_sizes":[256,64],"num_warps":8,"num_stages":3}'),
    (64, '{"block_sizes":[256,64],"num_warps":4,"num_stages":4}'),
]


def rel_diff(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30)).item()


def tflops(flops, us):
    return flops / (us * 1e-6) / 1e12


def best_of(configs, call, timer):
    best = None
    for config in configs:
        us = timer(lambda: call(config))
        print(f"    tessel {config}: {us:.1f} us", flush=True)
        if best is None or us < best[0]:
            best = (us, config)
    return best


def fused(shapes, timer, use_compile):
    op = torch.ops.tessel_examples.matmul_bias_gelu
    eager = lambda x, y, b: F.gelu(x @ y + b, approximate="tanh")  # noqa: E731
    addmm = lambda x, y, b: F.gelu(torch.addmm(b, x, y), approximate="tanh")  # noqa: E731
    compiled = torch.compile(eager) if use_compile else None
    speedups = []
    for m, n, k in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        x = (torch.randn(m, k, device="cuda", generator=g) * k ** -0.5).bfloat16()
        y = torch.randn(k, n, device="cuda", generator=g).bfloat16()
        b = torch.randn(n, device="cuda", generator=g).bfloat16()
        flops = 2 * m * n * k
        print(f"fused matmul+bias+gelu {m}x{n}x{k} bf16:", flush=True)
        us, config = best_of(FUSED_CONFIGS, lambda c: op(x, y, b, c), timer)
        diff = rel_diff(op(x, y, b, config), eager(x, y, b))
        peers = {"eager": eager, "addmm": addmm}
        if compiled is not None:
            peers["compile"] = compiled
        row = [f"  tessel {tflops(flops, us):7.1f} TFLOP/s ({us:.1f} us, rel diff {diff:.1e})"]
        for name, fn in peers.items():
            peer_us = timer(lambda: fn(x, y, b))
            speedups.append((name, peer_us / us))
            row.append(f"{name} {peer_us:.1f} us = {peer_us / us:.3f}x")
        print(", ".join(row) + f"  [{config}]", flush=True)
    return speedups


def grouped(timer, experts=8, rows=512, k=4096, n=4096):
    op = torch.ops.tessel_examples.grouped_matmul
    g = torch.Generator(device="cuda").manual_seed(1)
    t = experts * rows
    x = (torch.randn(t, k, device="cuda", generator=g) * k ** -0.5).bfloat16()
    w = torch.randn(experts, n, k, device="cuda", generator=g).bfloat16().transpose(1, 2)
    offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * rows
    n_rows = torch.tensor(t, dtype=torch.int32, device="cuda")
    block_expert = {bm: (torch.arange(t // bm, device="cuda") * bm // rows).int() for bm in (64, 128)}
    flops = 2 * t * n * k
    print(f"grouped GEMM {experts} experts x {rows} rows, K {k}, N {n} bf16:", flush=True)
    us, (bm, config) = best_of(GROUPED_CONFIGS,
                               lambda c: op(x, w, block_expert[c[0]], n_rows, c[0], c[1]), timer)
    out = op(x, w, block_expert[bm], n_rows, bm, config)
    loop = lambda: torch.cat([x[e * rows:(e + 1) * rows] @ w[e] for e in range(experts)])  # noqa: E731
    peers = {"loop of torch.mm": loop}
    if hasattr(torch, "_grouped_mm"):
        peers["torch._grouped_mm"] = lambda: torch._grouped_mm(x, w, offs=offs)
    row = [f"  tessel {tflops(flops, us):7.1f} TFLOP/s ({us:.1f} us, rel diff "
           f"{rel_diff(out, loop()):.1e})"]
    speedups = []
    for name, fn in peers.items():
        try:
            peer_us = timer(fn)
        except RuntimeError as e:  # a torch without the kernel for this GPU or layout
            row.append(f"{name} failed: {str(e).splitlines()[0][:100]}")
            continue
        speedups.append((name, peer_us / us))
        row.append(f"{name} {tflops(flops, peer_us):.1f} TFLOP/s = {peer_us / us:.3f}x")
    print(", ".join(row) + f"  [block_m {bm}, {config}]", flush=True)
    return speedups


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("library")
    p.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,2048x2048x2048",
                   help="MxNxK,... of the fused epilogue")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_dot_vs_torch: torch sees no CUDA device")
    torch.ops.load_library(a.library)
    print(f"on {torch.cuda.get_device_name()}; torch {torch.__version__}; median of {a.rounds} "
          f"rounds of {a.iters} calls; speedup = peer time / tessel time")
    timer = lambda fn: time_us(fn, "cuda", a.iters, a.rounds, a.warmup)  # noqa: E731
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    speedups = fused(shapes, timer, not a.no_compile) + grouped(timer)
    for name in dict(speedups):
        print(f"geomean speedup over {name}: "
              f"{statistics.geometric_mean([s for n, s in speedups if n == name]):.3f}x")


if __name__ == "__main__":
    main()
