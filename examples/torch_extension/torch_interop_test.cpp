// Checks of <tessel/torch.hpp>: from_torch and to_torch share memory (no copy), keep
// dtypes, shapes, strides and element offsets, keep the other side's memory alive through
// the DLPack deleter, and refuse what tessel cannot take; torch_stream gives torch's
// current CUDA stream (CUDA checks run where torch sees a GPU). Prints one line per check
// and "N passed, N failed"; exits 1 when a check failed.
#include <ATen/ATen.h>

#include <cstdio>
#include <functional>
#include <string>
#include <tessel/torch.hpp>
#include <vector>
#if TESSEL_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#endif

namespace {
namespace ts = tessel;

int failures = 0;

#define EXPECT(cond)                                                    \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::printf("  %s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                       \
    }                                                                   \
  } while (0)

std::vector<int64_t> vec(at::IntArrayRef r) { return std::vector<int64_t>(r.begin(), r.end()); }

/// t's values in row-major order as doubles.
std::vector<double> values(const at::Tensor& t) {
  at::Tensor d = t.to(at::kDouble).contiguous().cpu();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

/// The message of the UserError `fn` throws, or "" when it throws none.
std::string user_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ts::UserError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void every_dtype_maps_both_ways() {
  struct Case {
    at::ScalarType torch;
    ts::DType tessel;
  };
  for (Case c :
       {Case{at::kBool, ts::boolean}, Case{at::kInt, ts::i32}, Case{at::kLong, ts::i64},
        Case{at::kUInt64, ts::u64}, Case{at::kHalf, ts::f16}, Case{at::kBFloat16, ts::bf16},
        Case{at::kFloat, ts::f32}, Case{at::kDouble, ts::f64}}) {
    at::Tensor t = at::arange(12, at::kLong).remainder(c.torch == at::kBool ? 2 : 12).to(c.torch);
    t = t.reshape({3, 4});
    ts::Buffer b = ts::from_torch(t);
    EXPECT(b.dtype() == c.tessel);
    EXPECT(b.data_ptr() == t.data_ptr());
    EXPECT(b.to_vector() == values(t));
    at::Tensor back = ts::to_torch(b);
    EXPECT(back.scalar_type() == c.torch);
    EXPECT(back.data_ptr() == t.data_ptr());
    EXPECT(values(back) == values(t));
  }
}

void tessel_buffers_of_every_dtype_export() {
  for (ts::DType dt :
       {ts::boolean, ts::i32, ts::i64, ts::u64, ts::f16, ts::bf16, ts::f32, ts::f64}) {
    ts::Buffer b = ts::Buffer::from_vector({0, 1, 1, 0, 1, 1}, {2, 3}, dt);
    at::Tensor t = ts::to_torch(b);
    EXPECT(ts::from_torch(t).dtype() == dt);
    EXPECT(t.data_ptr() == b.data_ptr());
    EXPECT(values(t) == b.to_vector());
  }
}

void strides_and_offsets_survive() {
  // Rows 1..4, every other column from 2, transposed: shape [4, 4], strides [2, 10],
  // offset 12 elements into the storage.
  at::Tensor base = at::arange(60, at::kFloat).reshape({6, 10});
  at::Tensor view = base.slice(0, 1, 5).slice(1, 2, 9, 2).t();
  ts::Buffer b = ts::from_torch(view);
  EXPECT(b.shape() == vec(view.sizes()));
  EXPECT(b.strides() == vec(view.strides()));
  EXPECT(b.data_ptr() == view.data_ptr());
  EXPECT(b.to_vector() == values(view));
  at::Tensor back = ts::to_torch(b);
  EXPECT(vec(back.sizes()) == vec(view.sizes()));
  EXPECT(vec(back.strides()) == vec(view.strides()));
  EXPECT(back.data_ptr() == view.data_ptr());
  // A tessel view of a tessel Buffer, exported: torch sees the same elements.
  ts::Buffer tb = ts::Buffer::arange(60, ts::f32).view_as_strided({4, 4}, {2, 10}, 12);
  at::Tensor tt = ts::to_torch(tb);
  EXPECT(tt.data_ptr() == tb.data_ptr());
  EXPECT(vec(tt.strides()) == (std::vector<int64_t>{2, 10}));
  EXPECT(values(tt) == values(view));
}

void zero_dim_and_empty_tensors() {
  at::Tensor s = at::scalar_tensor(3.5, at::kDouble);
  ts::Buffer b = ts::from_torch(s);
  EXPECT(b.dim() == 0);
  EXPECT(b.item() == 3.5);
  EXPECT(ts::to_torch(b).dim() == 0);
  at::Tensor e = at::empty({0, 3}, at::kFloat);
  ts::Buffer be = ts::from_torch(e);
  EXPECT(be.shape() == (std::vector<int64_t>{0, 3}));
  EXPECT(ts::to_torch(be).numel() == 0);
}

void a_buffer_keeps_the_tensor_alive() {
  at::Tensor t = at::arange(8, at::kFloat);
  c10::weak_intrusive_ptr<c10::StorageImpl> storage = t.storage().getWeakStorageImpl();
  ts::Buffer b = ts::from_torch(t);
  t = at::Tensor();
  EXPECT(!storage.expired());
  EXPECT(b.to_vector() == (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  b = ts::Buffer();
  EXPECT(storage.expired());  // the deleter ran
}

void a_tensor_keeps_the_buffer_alive() {
  ts::Buffer b = ts::Buffer::arange(5, ts::i64);
  std::weak_ptr<ts::Storage> storage = b.storage();
  at::Tensor t = ts::to_torch(b);
  b = ts::Buffer();
  EXPECT(!storage.expired());
  EXPECT(values(t) == (std::vector<double>{0, 1, 2, 3, 4}));
  t = at::Tensor();
  EXPECT(storage.expired());
}

void writes_through_either_side_are_seen_by_the_other() {
  at::Tensor t = at::zeros({2, 3}, at::kFloat);
  ts::Buffer b = ts::from_torch(t);
  b.fill(2);
  EXPECT(values(t) == std::vector<double>(6, 2));
  t.add_(1);
  EXPECT(b.to_vector() == std::vector<double>(6, 3));
}

void unsupported_tensors_are_user_errors() {
  std::string m = user_error([] { ts::from_torch(at::zeros({2}, at::kByte)); });
  EXPECT(contains(m, "torch dtype Byte has no tessel dtype"));
  EXPECT(contains(m, "torch_interop_test.cpp:"));  // the caller's line
  m = user_error([] { ts::from_torch(at::zeros({2}, at::kComplexFloat)); });
  EXPECT(contains(m, "has no tessel dtype"));
  m = user_error([] { ts::from_torch(at::zeros({2, 2}).to_sparse()); });
  EXPECT(contains(m, "a tensor of layout Sparse is not supported"));
  m = user_error([] { ts::from_torch(at::Tensor()); });
  EXPECT(contains(m, "from_torch of an undefined tensor"));
  m = user_error([] { ts::to_torch(ts::Buffer()); });
  EXPECT(contains(m, "to_torch of an undefined Buffer"));
}

void cpu_tensors_have_no_stream() { EXPECT(ts::torch_stream(at::zeros({1})).handle == nullptr); }

#if TESSEL_TORCH_CUDA
void cuda_tensors_are_shared() {
  at::Tensor t = at::arange(24, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA))
                     .reshape({4, 6})
                     .slice(1, 1, 5);
  ts::Buffer b = ts::from_torch(t);
  EXPECT(b.device() == ts::cuda(t.get_device()));
  EXPECT(b.data_ptr() == t.data_ptr());
  EXPECT(b.strides() == vec(t.strides()));
  EXPECT(b.to_vector() == values(t));
  ts::Buffer z = ts::Buffer::full({3}, 4, ts::bf16, ts::cuda(t.get_device()));
  at::Tensor zt = ts::to_torch(z);
  EXPECT(zt.is_cuda() && zt.scalar_type() == at::kBFloat16);
  EXPECT(values(zt) == std::vector<double>(3, 4));
}

void torch_stream_is_torchs_current_stream() {
  at::Tensor t = at::zeros({1}, at::TensorOptions().device(at::kCUDA));
  EXPECT(ts::torch_stream(t).handle == c10::cuda::getCurrentCUDAStream().stream());
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  {
    c10::cuda::CUDAStreamGuard guard(side);
    EXPECT(ts::torch_stream(t).handle == side.stream());
  }
  EXPECT(ts::torch_stream(t).handle == c10::cuda::getCurrentCUDAStream().stream());
}
#endif

}  // namespace

int main() {
  struct Check {
    const char* name;
    void (*fn)();
  };
  std::vector<Check> checks = {
      {"every_dtype_maps_both_ways", every_dtype_maps_both_ways},
      {"tessel_buffers_of_every_dtype_export", tessel_buffers_of_every_dtype_export},
      {"strides_and_offsets_survive", strides_and_offsets_survive},
      {"zero_dim_and_empty_tensors", zero_dim_and_empty_tensors},
      {"a_buffer_keeps_the_tensor_alive", a_buffer_keeps_the_tensor_alive},
      {"a_tensor_keeps_the_buffer_alive", a_tensor_keeps_the_buffer_alive},
      {"writes_through_either_side_are_seen_by_the_other",
       writes_through_either_side_are_seen_by_the_other},
      {"unsupported_tensors_are_user_errors", unsupported_tensors_are_user_errors},
      {"cpu_tensors_have_no_stream", cpu_tensors_have_no_stream},
  };
#if TESSEL_TORCH_CUDA
  if (at::hasCUDA()) {
    checks.push_back({"cuda_tensors_are_shared", cuda_tensors_are_shared});
    checks.push_back(
        {"torch_stream_is_torchs_current_stream", torch_stream_is_torchs_current_stream});
  } else {
    std::printf("no CUDA device: CUDA checks skipped\n");
  }
#else
  std::printf("built without CUDA (TESSEL_TORCH_CUDA=0): CUDA checks skipped\n");
#endif
  int passed = 0, failed = 0;
  for (const Check& c : checks) {
    int before = failures;
    try {
      c.fn();
    } catch (const std::exception& e) {
      std::printf("  threw: %s\n", e.what());
      ++failures;
    }
    bool ok = failures == before;
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", c.name);
    (ok ? passed : failed)++;
  }
  std::printf("torch interop: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
