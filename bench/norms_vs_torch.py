#!/usr/bin/env python3
"""tessel's reduction / normalization kernels against torch eager, on the same GPU, in one run.

Runs the C++ benchmark (bench/norms_bench.cpp, which prints one JSON object per line for
the best hand-picked config of each kernel, dtype and shape), then times torch eager for
the same ops, shapes and dtypes on the same GPU, and prints a table:

  kernel, dtype, shape, tessel ms, torch ms, tessel GB/s, speedup (torch ms / tessel ms),
  fraction of copy bandwidth (tessel GB/s / the GB/s of torch's x.clone() on the same x),

then the geomean speedup per kernel (issue 3's targets: >= 1.3x for softmax and
cross_entropy, >= 1.2x for layer_norm and rms_norm), the copy-bandwidth fraction on rows of
4096 elements or more (target >= 0.85), and the configs tessel used.

torch peers: torch.softmax(x, -1) (for softmax and the online softmax_two_pass and
softmax_online);
F.layer_norm(x, (N,), w, b, 1e-5); F.rms_norm(x, (N,), w, 1e-5) where torch has it, else
x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w; F.cross_entropy(x, t,
reduction='none') with int64 targets (for cross_entropy and
cross_entropy_online). Timing as the C++ side: CUDA events around
back-to-back calls, 3 warmup calls, the median over 5 rounds of the mean of --iters calls.
Bytes as the C++ side: every tensor read once plus written once.

Usage:
  python3 bench/norms_vs_torch.py [BINARY] [--iters N] [--kernels a,b] [--dtypes f32,bf16]
                                  [--shapes 4096x256,...] [--jobs J] [--json-out FILE]
                                  [--tessel-json FILE] [--static-shapes]
BINARY defaults to build/bench/norms_bench (relative to the current directory, then to the
repository root). --tessel-json reads saved output of the binary instead of running it.
Output is flushed line by line (fine under PYTHONUNBUFFERED=1 or a pipe).
"""

import argparse
import json
import math
import os
import subprocess
import sys

KERNELS = ["softmax", "softmax_two_pass", "softmax_online", "layer_norm", "rms_norm", "cross_entropy",
           "cross_entropy_online"]
TARGET_SPEEDUP = {"softmax": 1.3, "softmax_two_pass": 1.3, "softmax_online": 1.3, "cross_entropy": 1.3,
                  "cross_entropy_online": 1.3, "layer_norm": 1.2, "rms_norm": 1.2}
TARGET_COPY_FRACTION = 0.85
EPS = 1e-5
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BINARY = os.path.join("build", "bench", "norms_bench")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def out(*args):
    print(*args, flush=True)


def die(msg, code=2):
    log(f"norms_vs_torch: error: {msg}")
    sys.exit(code)


# ---------------------------------------------------------------- the tessel side

def find_binary(path):
    candidates = [path]
    if not os.path.isabs(path):
        candidates.append(os.path.join(REPO_ROOT, path))
    for c in candidates:
        if os.path.isfile(c):
            if not os.access(c, os.X_OK):
                die(f"{c} exists but is not executable")
            return c
    die(
        "the tessel benchmark binary was not found (looked for: " + ", ".join(candidates) + ").\n"
        "  Build it first, e.g.: cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && "
        "ninja -C build bench/norms_bench\n"
        "  or pass its path: python3 bench/norms_vs_torch.py build-norms/bench/norms_bench"
    )


def parse_rows(lines, source):
    rows = []
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            if line:
                log(f"[{source}] {line}")
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            log(f"[{source}] ignoring a line that is not JSON ({e}): {line}")
            continue
        missing = [k for k in ("kernel", "dtype", "M", "N", "ms", "gbs", "config") if k not in row]
        if missing:
            log(f"[{source}] ignoring a result without {missing}: {line}")
            continue
        rows.append(row)
    return rows


def run_tessel(binary, bench_args):
    cmd = [binary] + bench_args
    log("running: " + " ".join(cmd))
    env = dict(os.environ)
    try:
        # stderr (progress) goes straight to ours; stdout (JSON lines) is read line by line.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=None, text=True, bufsize=1, env=env)
    except OSError as e:
        die(f"could not start {binary}: {e}")
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.strip():
                log("tessel: " + line.strip())
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.kill()
        raise
    if rc != 0:
        die(f"{binary} exited with status {rc} (see its messages above)", code=1)
    rows = parse_rows(lines, "norms_bench")
    if not rows:
        die(f"{binary} printed no results")
    return rows


# ---------------------------------------------------------------- the torch side

def import_torch():
    try:
        import torch  # noqa: F401
        import torch.nn.functional  # noqa: F401
    except ImportError as e:
        die(f"torch is needed for the peer timings: {e}")
    import torch

    if not torch.cuda.is_available():
        die("torch.cuda.is_available() is False: this comparison needs the GPU the tessel binary ran on")
    return torch


def torch_dtype(torch, name):
    table = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    if name not in table:
        die(f"unknown dtype {name!r} in the tessel output")
    return table[name]


def time_ms(torch, fn, iters):
    """Median over 5 rounds of the mean time of `iters` back-to-back calls (CUDA events)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    rounds = []
    for _ in range(5):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        rounds.append(start.elapsed_time(end) / iters)
    rounds.sort()
    return rounds[2]


def bytes_moved(kernel, m, n, elem):
    x = m * n * elem
    if kernel == "layer_norm":
        return 2 * x + 2 * n * elem
    if kernel == "rms_norm":
        return 2 * x + n * elem
    if kernel in ("cross_entropy", "cross_entropy_online"):
        return x + m * 8 + m * 4
    return 2 * x


class TorchPeers:
    """torch eager timings per (kernel, dtype, M, N), and x.clone() per (dtype, M, N)."""

    def __init__(self, torch, iters):
        self.torch = torch
        self.F = torch.nn.functional
        self.iters = iters
        self.x_key = None
        self.x = None
        self.clone_ms = {}
        self.rms_norm_form = "F.rms_norm" if hasattr(self.F, "rms_norm") else "x * rsqrt(mean(x^2) + eps) * w"

    def _x(self, dtype, m, n):
        key = (dtype, m, n)
        if self.x_key != key:
            self.x = None
            self.torch.cuda.empty_cache()
            gen = self.torch.Generator(device="cuda").manual_seed(0)
            self.x = self.torch.randn(m, n, device="cuda", dtype=torch_dtype(self.torch, dtype), generator=gen)
            self.x_key = key
        return self.x

    def op(self, kernel, dtype, m, n):
        torch, F = self.torch, self.F
        x = self._x(dtype, m, n)
        dt = x.dtype
        if kernel in ("softmax", "softmax_two_pass", "softmax_online"):
            return lambda: torch.softmax(x, dim=-1)
        if kernel == "layer_norm":
            w = torch.randn(n, device="cuda", dtype=dt)
            b = torch.randn(n, device="cuda", dtype=dt)
            return lambda: F.layer_norm(x, (n,), w, b, EPS)
        if kernel == "rms_norm":
            w = torch.randn(n, device="cuda", dtype=dt)
            if hasattr(F, "rms_norm"):
                return lambda: F.rms_norm(x, (n,), w, EPS)
            return lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w
        if kernel in ("cross_entropy", "cross_entropy_online"):
            t = torch.randint(0, n, (m,), device="cuda", dtype=torch.int64)
            return lambda: F.cross_entropy(x, t, reduction="none")
        die(f"unknown kernel {kernel!r} in the tessel output")

    def time(self, kernel, dtype, m, n):
        return time_ms(self.torch, self.op(kernel, dtype, m, n), self.iters)

    def copy_gbs(self, dtype, m, n):
        key = (dtype, m, n)
        if key not in self.clone_ms:
            x = self._x(dtype, m, n)
            self.clone_ms[key] = time_ms(self.torch, lambda: x.clone(), self.iters)
        elem = self._x(dtype, m, n).element_size()
        return 2 * m * n * elem / self.clone_ms[key] / 1e6


# ---------------------------------------------------------------- report

def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if not values:
        return float("nan")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def print_report(rows, device, torch_version, rms_norm_form):
    out("")
    out(f"device: {device}; torch {torch_version}; torch rms_norm peer: {rms_norm_form}")
    head = (f"{'kernel':<17}{'dtype':<6}{'shape':>14}{'tessel ms':>11}{'torch ms':>10}{'tessel GB/s':>12}"
            f"{'torch GB/s':>11}{'speedup':>9}{'copy GB/s':>10}{'/copy':>7}  ok")
    out(head)
    out("-" * len(head))
    for r in rows:
        shape = f"[{r['M']}, {r['N']}]"
        out(f"{r['kernel']:<17}{r['dtype']:<6}{shape:>14}{r['ms']:>11.4f}{r['torch_ms']:>10.4f}{r['gbs']:>12.1f}"
            f"{r['torch_gbs']:>11.1f}{r['speedup']:>8.2f}x{r['copy_gbs']:>10.1f}{r['copy_fraction']:>7.2f}  "
            f"{'yes' if r.get('ok', True) else 'NO'}")

    out("")
    out("geomean speedup over torch eager (torch ms / tessel ms), over dtypes and shapes:")
    for k in KERNELS:
        ks = [r for r in rows if r["kernel"] == k]
        if not ks:
            continue
        g = geomean([r["speedup"] for r in ks])
        per_dtype = ", ".join(
            f"{d} {geomean([r['speedup'] for r in ks if r['dtype'] == d]):.2f}x"
            for d in sorted({r["dtype"] for r in ks}))
        target = TARGET_SPEEDUP.get(k)
        verdict = "" if target is None else f"  (target {target:.1f}x: {'met' if g >= target else 'NOT met'})"
        out(f"  {k:<17} {g:5.2f}x   [{per_dtype}]{verdict}")

    out("")
    out(f"fraction of copy bandwidth (torch x.clone() on the same x) on rows of >= 4096 elements "
        f"(target {TARGET_COPY_FRACTION}):")
    for k in KERNELS:
        ks = [r for r in rows if r["kernel"] == k and r["N"] >= 4096]
        if not ks:
            continue
        fr = [r["copy_fraction"] for r in ks]
        worst = min(ks, key=lambda r: r["copy_fraction"])
        out(f"  {k:<17} min {min(fr):.2f} ({worst['dtype']} [{worst['M']}, {worst['N']}]), mean {sum(fr) / len(fr):.2f}"
            f"  {'met' if min(fr) >= TARGET_COPY_FRACTION else 'NOT met'}")

    bad = [r for r in rows if not r.get("ok", True)]
    if bad:
        out("")
        out("WARNING: tessel's output did not match the reference on a checked row for: " +
            ", ".join(f"{r['kernel']} {r['dtype']} [{r['M']}, {r['N']}]" for r in bad))

    out("")
    out("tessel configs used (best of the hand-picked set per shape):")
    for r in rows:
        out(f"  {r['kernel']:<17}{r['dtype']:<6}[{r['M']}, {r['N']}]  {json.dumps(r['config'], separators=(',', ':'))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", default=DEFAULT_BINARY, help="the norms_bench binary (default %(default)s)")
    ap.add_argument("--iters", type=int, default=50, help="calls per timed round, both sides (default %(default)s)")
    ap.add_argument("--kernels", help="comma-separated subset of " + ",".join(KERNELS))
    ap.add_argument("--dtypes", help="comma-separated dtypes (default f32,bf16)")
    ap.add_argument("--shapes", help="comma-separated MxN shapes (default the issue's five)")
    ap.add_argument("--jobs", type=int, help="parallel NVRTC compilations in the binary")
    ap.add_argument("--verbose", action="store_true", help="the binary prints every config's time")
    ap.add_argument("--static-shapes", action="store_true",
                    help="the binary specializes kernels on exact sizes (Settings::static_shapes)")
    ap.add_argument("--tessel-json", help="read the binary's JSON lines from this file instead of running it")
    ap.add_argument("--json-out", help="also write the merged results (one JSON object per line) here")
    args = ap.parse_args()

    if args.tessel_json:
        try:
            with open(args.tessel_json) as f:
                rows = parse_rows(f, args.tessel_json)
        except OSError as e:
            die(f"cannot read {args.tessel_json}: {e}")
        if not rows:
            die(f"{args.tessel_json} holds no results")
    else:
        binary = find_binary(args.binary)
        bench_args = ["--iters", str(args.iters)]
        for opt in ("kernels", "dtypes", "shapes", "jobs"):
            v = getattr(args, opt)
            if v is not None:
                bench_args += [f"--{opt}", str(v)]
        if args.verbose:
            bench_args.append("--verbose")
        if args.static_shapes:
            bench_args.append("--static-shapes")
        rows = run_tessel(binary, bench_args)

    torch = import_torch()
    peers = TorchPeers(torch, args.iters)
    device = torch.cuda.get_device_name(0)
    log(f"timing torch {torch.__version__} eager on {device}")
    # Group by (dtype, M, N) so each x is made once.
    rows.sort(key=lambda r: (r["dtype"], r["M"], r["N"], KERNELS.index(r["kernel"]) if r["kernel"] in KERNELS else 99))
    for r in rows:
        m, n = int(r["M"]), int(r["N"])
        r["torch_ms"] = peers.time(r["kernel"], r["dtype"], m, n)
        elem = {"f32": 4, "bf16": 2, "f16": 2}[r["dtype"]]
        r["torch_gbs"] = bytes_moved(r["kernel"], m, n, elem) / r["torch_ms"] / 1e6
        r["speedup"] = r["torch_ms"] / r["ms"]
        r["copy_gbs"] = peers.copy_gbs(r["dtype"], m, n)
        r["copy_fraction"] = r["gbs"] / r["copy_gbs"]
        log(f"torch: {r['kernel']} {r['dtype']} [{m}, {n}] {r['torch_ms']:.4f} ms (tessel {r['ms']:.4f} ms, "
            f"{r['speedup']:.2f}x; copy {r['copy_gbs']:.0f} GB/s)")
    rows.sort(key=lambda r: (KERNELS.index(r["kernel"]) if r["kernel"] in KERNELS else 99, r["dtype"], r["M"], r["N"]))
    print_report(rows, device, torch.__version__, peers.rms_norm_form)

    if args.json_out:
        with open(args.json_out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        log(f"wrote {args.json_out}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        die("interrupted", code=130)
