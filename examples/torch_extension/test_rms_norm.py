#!/usr/bin/env python3
"""torch.ops.tessel_examples.rms_norm (rms_norm_op.cpp) against torch, from Python.

CPU (the tessel interpreter): several shapes (ragged, 3-D, one column), float32, bfloat16
and float16, strided inputs, eps as a runtime value, and the operator's errors; meta
tensors (shapes only). Where torch sees a GPU: the same on CUDA, a call on a side stream,
and capture plus replay in torch.cuda.graph after changing the input in place. The
reference is x * rsqrt(mean(x^2) + eps) * w computed in float32 and rounded to x's dtype
(tessel's formula), and torch.nn.functional.rms_norm where torch has it.

Usage: python3 test_rms_norm.py LIBRARY [unittest arguments]
LIBRARY is libtessel_torch_examples.so (else the TESSEL_TORCH_EXAMPLES_LIB environment
variable). TESSEL_TORCH_REQUIRE_CUDA=1 makes a machine without a visible GPU a failure
instead of skipping the CUDA tests.
"""

import unittest

import torch
import torch.nn.functional as F

from op_test_main import cuda_skip_reason, main

EPS = 1e-6
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
# torch.testing's default tolerances for each dtype (about one rounding of the dtype).
TOL = {torch.float32: dict(rtol=1.3e-6, atol=1e-5), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-5),
       torch.float16: dict(rtol=1e-3, atol=1e-5)}
SHAPES = [(1, 1), (3, 17), (64, 256), (2, 5, 129), (7, 1000), (33, 1)]
CUDA_SHAPES = SHAPES + [(4096, 4096), (1000, 8192), (3, 65536)]


def op(x, w, eps=EPS):
    return torch.ops.tessel_examples.rms_norm(x, w, eps)


def reference(x, w, eps=EPS):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def inputs(shape, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g).to(dtype).to(device)
    w = (1 + 0.5 * torch.randn(shape[-1], generator=g)).to(dtype).to(device)
    return x, w


class Checks:
    """Tests run on self.device (a subclass per device)."""

    device = "cpu"
    shapes = SHAPES

    def check(self, x, w, eps=EPS):
        y = op(x, w, eps)
        self.assertEqual(y.shape, x.shape)
        self.assertEqual(y.dtype, x.dtype)
        self.assertEqual(y.device, x.device)
        self.assertTrue(y.is_contiguous())
        torch.testing.assert_close(y, reference(x, w, eps), **TOL[x.dtype])
        return y

    def test_shapes_and_dtypes_match_reference(self):
        for dtype in DTYPES:
            for shape in self.shapes:
                with self.subTest(dtype=dtype, shape=shape):
                    self.check(*inputs(shape, dtype, self.device))

    @unittest.skipUnless(hasattr(F, "rms_norm"), "torch has no F.rms_norm")
    def test_matches_torch_rms_norm(self):
        for dtype in DTYPES:
            for shape in self.shapes:
                with self.subTest(dtype=dtype, shape=shape):
                    x, w = inputs(shape, dtype, self.device, seed=1)
                    # torch rounds some intermediates to x's dtype: two roundings apart.
                    tol = {k: 2 * v for k, v in TOL[dtype].items()}
                    torch.testing.assert_close(op(x, w), F.rms_norm(x, (shape[-1],), w, EPS), **tol)

    def test_strided_inputs(self):
        x, _ = inputs((300, 37), torch.float32, self.device)
        _, w = inputs((37, 300), torch.float32, self.device, seed=1)
        self.check(x.t(), w)  # transposed: rows of stride 1, so reshape copies
        x, w = inputs((40, 64), torch.bfloat16, self.device)
        w2, _ = inputs((128,), torch.bfloat16, self.device, seed=2)
        self.check(x[::3], w2[::2])  # every third row; weight of stride 2
        self.check(x[:, 1:60], w[1:60])  # a column slice: a view with row stride 64

    def test_eps_is_a_runtime_value(self):
        x, w = inputs((7, 33), torch.float32, self.device)
        for eps in (1e-6, 1.0, 10.0):
            self.check(x, w, eps)

    def test_weight_of_another_float_dtype(self):
        x, _ = inputs((9, 50), torch.bfloat16, self.device)
        _, w = inputs((9, 50), torch.float32, self.device, seed=2)
        y = op(x, w)
        self.assertEqual(y.dtype, torch.bfloat16)
        torch.testing.assert_close(y, reference(x, w), **TOL[torch.bfloat16])

    def test_empty_rows(self):
        x, w = inputs((0, 8), torch.float32, self.device)
        self.assertEqual(op(x, w).shape, (0, 8))

    def test_bad_arguments_raise(self):
        x, w = inputs((4, 8), torch.float32, self.device)
        with self.assertRaisesRegex(RuntimeError, r"weight must have shape \[8\]"):
            op(x, w[:4])
        with self.assertRaisesRegex(RuntimeError, "x must be float32, float16 or bfloat16"):
            op(x.double(), w)
        with self.assertRaisesRegex(RuntimeError, "weight must be a float tensor"):
            op(x, w.int())
        with self.assertRaisesRegex(RuntimeError, "at least one dimension"):
            op(x[0, 0], w)


class CpuRmsNorm(Checks, unittest.TestCase):
    device = "cpu"


class MetaRmsNorm(unittest.TestCase):
    """Shapes without data: meta tensors and torch.compile's tracing."""

    def test_meta_tensors_give_the_output_shape_and_dtype(self):
        x = torch.empty(2, 5, 129, dtype=torch.bfloat16, device="meta")
        y = op(x, torch.empty(129, device="meta"))
        self.assertEqual((y.shape, y.dtype, y.device.type), (x.shape, torch.bfloat16, "meta"))
        with self.assertRaisesRegex(RuntimeError, r"weight must have shape \[129\]"):
            op(x, torch.empty(128, device="meta"))

    def test_torch_compile_traces_it_with_fake_tensors(self):
        # aot_eager traces with fake tensors (the Meta kernel) and runs the CPU kernel.
        f = torch.compile(lambda x, w: op(x, w) * 2, backend="aot_eager", fullgraph=True)
        x, w = inputs((4, 64), torch.float32, "cpu")
        torch.testing.assert_close(f(x, w), 2 * reference(x, w), **TOL[torch.float32])


@unittest.skipIf(cuda_skip_reason(), cuda_skip_reason() or "")
class CudaRmsNorm(Checks, unittest.TestCase):
    device = "cuda"
    shapes = CUDA_SHAPES

    def test_weight_on_another_device_raises(self):
        x, w = inputs((4, 8), torch.float32, "cuda")
        with self.assertRaisesRegex(RuntimeError, "put both on one device"):
            op(x, w.cpu())

    def test_runs_on_the_current_stream(self):
        x, w = inputs((2048, 1024), torch.bfloat16, "cuda")
        expected = reference(x, w)
        x2 = torch.zeros_like(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            # x2 is written after a sleep on the side stream: a kernel on any other stream
            # would read zeros.
            torch.cuda._sleep(100_000_000)
            x2.copy_(x)
            y = op(x2, w)
        side.synchronize()
        torch.testing.assert_close(y, expected, **TOL[torch.bfloat16])

    def test_graph_capture_and_replay(self):
        for dtype in (torch.float32, torch.bfloat16):
            with self.subTest(dtype=dtype):
                x, w = inputs((512, 768), dtype, "cuda")
                # One call outside the capture traces and compiles the kernel (torch's recipe
                # warms up on a side stream).
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    op(x, w)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    y = op(x, w)
                for seed in (3, 4):
                    new_x, _ = inputs((512, 768), dtype, "cuda", seed=seed)
                    x.copy_(new_x)
                    graph.replay()
                    torch.cuda.synchronize()
                    torch.testing.assert_close(y, reference(new_x, w), **TOL[dtype])


if __name__ == "__main__":
    main("test_rms_norm.py")
