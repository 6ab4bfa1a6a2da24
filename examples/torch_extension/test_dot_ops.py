#!/usr/bin/env python3
"""torch.ops.tessel_examples.matmul_bias_gelu and grouped_matmul (dot_ops.cpp) against torch.

CPU (the tessel interpreter) at small ragged shapes, bfloat16 and float16; meta tensors;
the operators' errors. Where torch sees a GPU: the same on CUDA at larger ragged shapes,
with tessel's default config and with a pinned wgmma config. The references are computed
in float32 from the same rounded inputs (torch.nn.functional.gelu(approximate="tanh") of
x @ y + bias; per-row expert products for the grouped GEMM) and rounded to x's dtype.

Usage: python3 test_dot_ops.py LIBRARY [unittest arguments]
LIBRARY is libtessel_torch_examples.so (else the TESSEL_TORCH_EXAMPLES_LIB environment
variable). TESSEL_TORCH_REQUIRE_CUDA=1 makes a machine without a visible GPU a failure
instead of skipping the CUDA tests.
"""

import unittest

import torch
import torch.nn.functional as F

from op_test_main import cuda_skip_reason, main

DTYPES = [torch.bfloat16, torch.float16]
# One rounding of the dtype, and an absolute term for sums of K products near zero.
TOL = {torch.bfloat16: dict(rtol=1.6e-2, atol=2e-2), torch.float16: dict(rtol=2e-3, atol=5e-3)}
PINNED = '{"block_sizes":[128,256,64],"num_warps":8,"num_stages":4}'
GROUPED_PINNED = '{"block_sizes":[256,64],"num_warps":8,"num_stages":3}'


def gelu_op(x, y, bias, config=""):
    return torch.ops.tessel_examples.matmul_bias_gelu(x, y, bias, config)


def grouped_op(x, w, block_expert, n_rows, block_m, config=""):
    return torch.ops.tessel_examples.grouped_matmul(x, w, block_expert, n_rows, block_m, config)


def gelu_reference(x, y, bias):
    return F.gelu(x.float() @ y.float() + bias.float(), approximate="tanh").to(x.dtype)


def grouped_reference(x, w, block_expert, n_rows, block_m):
    out = torch.zeros(x.shape[0], w.shape[2], dtype=torch.float32, device=x.device)
    experts = block_expert.long().repeat_interleave(block_m)[: x.shape[0]]
    for e in range(w.shape[0]):
        rows = (experts == e).nonzero().flatten()
        rows = rows[rows < n_rows]
        out[rows] = x[rows].float() @ w[e].float()
    return out.to(x.dtype)


def randn(shape, dtype, device, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(shape, generator=g)).to(dtype).to(device)


class Checks:
    """Tests run on self.device (a subclass per device)."""

    device = "cpu"
    gelu_shapes = [(70, 40, 48), (1, 24, 16), (33, 9, 1)]  # M, N, K
    grouped = dict(experts=3, block_m=64, rows=160, k=40, n=24)
    configs = [""]  # of matmul_bias_gelu
    grouped_configs = [""]

    def test_matmul_bias_gelu_matches_torch(self):
        for dtype in DTYPES:
            for m, n, k in self.gelu_shapes:
                for config in self.configs:
                    with self.subTest(dtype=dtype, shape=(m, n, k), config=config):
                        x = randn((m, k), dtype, self.device, 1, scale=k ** -0.5)
                        y = randn((k, n), dtype, self.device, 2)
                        bias = randn((n,), dtype, self.device, 3)
                        out = gelu_op(x, y, bias, config)
                        self.assertEqual((out.shape, out.dtype, out.device.type),
                                         ((m, n), dtype, self.device))
                        torch.testing.assert_close(out, gelu_reference(x, y, bias), **TOL[dtype])

    def test_grouped_matmul_matches_per_expert_products(self):
        p = self.grouped
        t, block_m = p["rows"], p["block_m"]
        blocks = (t + block_m - 1) // block_m
        for dtype in DTYPES:
            for config in self.grouped_configs:
                with self.subTest(dtype=dtype, config=config):
                    x = randn((t, p["k"]), dtype, self.device, 4, scale=p["k"] ** -0.5)
                    w = randn((p["experts"], p["k"], p["n"]), dtype, self.device, 5)
                    # Blocks' experts out of order; the last rows not counted.
                    block_expert = (torch.arange(blocks, dtype=torch.int32) * 2 % p["experts"]).to(
                        self.device)
                    n_rows = t - block_m // 2 - 3
                    n = torch.tensor(n_rows, dtype=torch.int32, device=self.device)
                    out = grouped_op(x, w, block_expert, n, block_m, config)
                    self.assertEqual(out.shape, (t, p["n"]))
                    torch.testing.assert_close(
                        out, grouped_reference(x, w, block_expert, n_rows, block_m), **TOL[dtype])
                    self.assertEqual(out[n_rows:].abs().max().item(), 0)

    def test_bad_arguments_raise(self):
        x = randn((8, 16), torch.bfloat16, self.device, 1)
        y = randn((16, 4), torch.bfloat16, self.device, 2)
        bias = randn((4,), torch.bfloat16, self.device, 3)
        with self.assertRaisesRegex(RuntimeError, "x must be bfloat16 or float16"):
            gelu_op(x.float(), y.float(), bias)
        with self.assertRaisesRegex(RuntimeError, "y has 8 rows, x has 16 columns"):
            gelu_op(x, y[:8], bias)
        with self.assertRaisesRegex(RuntimeError, "give both one dtype"):
            gelu_op(x, y.half(), bias)
        with self.assertRaisesRegex(RuntimeError, r"bias must have shape \[4\]"):
            gelu_op(x, y, bias[:3])
        w = randn((2, 16, 4), torch.bfloat16, self.device, 4)
        be = torch.zeros(1, dtype=torch.int32, device=self.device)
        n = torch.tensor(8, dtype=torch.int32, device=self.device)
        with self.assertRaisesRegex(RuntimeError, "block_m must be 64 or 128"):
            grouped_op(x, w, be, n, 32)
        with self.assertRaisesRegex(RuntimeError, "n_rows must be one int32"):
            grouped_op(x, w, be, n.long(), 64)
        with self.assertRaisesRegex(RuntimeError, r"w must be \[experts, 16, N\]"):
            grouped_op(x, w[:, :8], be, n, 64)


class CpuDotOps(Checks, unittest.TestCase):
    device = "cpu"


class MetaDotOps(unittest.TestCase):
    def test_meta_tensors_give_the_output_shape_and_dtype(self):
        x = torch.empty(300, 64, dtype=torch.bfloat16, device="meta")
        y = torch.empty(64, 96, dtype=torch.bfloat16, device="meta")
        out = gelu_op(x, y, torch.empty(96, device="meta"))
        self.assertEqual((out.shape, out.dtype, out.device.type), ((300, 96), torch.bfloat16, "meta"))
        w = torch.empty(4, 64, 32, dtype=torch.bfloat16, device="meta")
        be = torch.empty(5, dtype=torch.int32, device="meta")
        n = torch.empty((), dtype=torch.int32, device="meta")
        self.assertEqual(grouped_op(x, w, be, n, 64).shape, (300, 32))


@unittest.skipIf(cuda_skip_reason(), cuda_skip_reason() or "")
class CudaDotOps(Checks, unittest.TestCase):
    device = "cuda"
    gelu_shapes = Checks.gelu_shapes + [(1000, 520, 328), (512, 1024, 256)]
    grouped = dict(experts=5, block_m=64, rows=1000, k=264, n=320)
    configs = ["", PINNED]
    grouped_configs = ["", '{"block_sizes":[128,64],"num_warps":4,"num_stages":3}']

    def test_grouped_matmul_pinned_on_128_row_blocks(self):
        t, k, n, block_m = 768, 256, 512, 128
        x = randn((t, k), torch.bfloat16, "cuda", 6, scale=k ** -0.5)
        w = randn((3, k, n), torch.bfloat16, "cuda", 7)
        block_expert = torch.tensor([2, 0, 1, 1, 0, 2], dtype=torch.int32, device="cuda")
        nr = torch.tensor(700, dtype=torch.int32, device="cuda")
        for config in ("", GROUPED_PINNED):
            with self.subTest(config=config):
                out = grouped_op(x, w, block_expert, nr, block_m, config)
                torch.testing.assert_close(out, grouped_reference(x, w, block_expert, 700, block_m),
                                           **TOL[torch.bfloat16])


if __name__ == "__main__":
    main("test_dot_ops.py")
