#include "runtime/call_key.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <span>

#include "common/stack_span.hpp"
#include "driver/alias_groups.hpp"
#include "frontend/trace.hpp"

namespace tessel::detail {

// A size's bucket in the key, one character: 'A' + log2 of its next power of two
// (common/pow2.hpp's next_pow2, saturating at 2^62).
static char size_bucket(int64_t s) {
  int log2 = s <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(s - 1));
  return static_cast<char>('A' + std::min(log2, 62));
}

const std::vector<const Buffer*>& tensor_args(CallArgs args) {
  thread_local std::vector<const Buffer*> out;
  out.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) out[i] = buffer_arg(args[i]);
  return out;
}

// A dim of b whose size is above 1 and whose stride is 1 (the last such), or -1.
static int unit_stride_dim(const Buffer& b) {
  for (int d = b.dim() - 1; d >= 0; --d)
    if (b.stride(d) == 1 && b.size(d) > 1) return d;
  return -1;
}

ir::ArgFacts arg_facts(const Buffer& b, bool exact) {
  ir::ArgFacts f;
  int es = dtype_size(b.dtype());
  f.contiguous = b.dim() > 0 && b.stride(-1) == 1;
  if (!f.contiguous) f.unit_stride_dim = unit_stride_dim(b);
  f.base_aligned = reinterpret_cast<uintptr_t>(b.data_ptr()) % 16 == 0;
  for (int d = 0; d < b.dim(); ++d) {
    // A dim of one element never multiplies its stride (index 0): aligned whatever it is.
    f.stride_aligned.push_back(b.size(d) <= 1 || (b.stride(d) * es) % 16 == 0);
    f.size_div16.push_back(b.size(d) % 16 == 0);
  }
  for (int64_t s : b.shape()) f.known_sizes.push_back(ir::size_fixed_by_key(s, exact) ? s : -1);
  return f;
}

void write_argument_key(CallArgs args, const std::vector<ParamKind>& params, bool exact,
                        bool on_gpu, bool check_bounds, KeyText& k) {
  // Each tensor's bytes once: for the alias groups and for its span (64-bit indexing).
  StackSpan<std::pair<uintptr_t, uintptr_t>, 16> scratch(args.size());
  const std::span<std::pair<uintptr_t, uintptr_t>> ranges = scratch.span();
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer* b = buffer_arg(args[i]);
    ranges[i] = b ? rt::byte_range(*b) : std::pair<uintptr_t, uintptr_t>{0, 0};
  }
  const std::vector<int> groups = rt::alias_groups(ranges);
  bool big = false;
  char* p = k.begin(1);
  *p++ = on_gpu ? 'g' : 'c';
  k.end(p);
  for (size_t i = 0; i < args.size(); ++i) {
    if (const Buffer* b = buffer_arg(args[i])) {
      const int es = dtype_size(b->dtype());
      const std::vector<int64_t>& shape = b->shape();
      const std::vector<int64_t>& strides = b->strides();
      const size_t rank = shape.size();
      // Per dim at most ',', '#' and an integer, or ',' and three marks; around them the
      // dtype, rank, stride class, unit dim, alignment, alias group and device.
      p = k.begin(8 + 2 * KeyText::kIntChars + rank * (2 + KeyText::kIntChars));
      *p++ = '|';
      *p++ = static_cast<char>('a' + static_cast<int>(b->dtype()));
      *p++ = static_cast<char>('0' + rank);  // one character per field where it fits
      for (size_t d = 0; d < rank; ++d) {
        const int64_t s = shape[d];
        *p++ = ',';
        if (exact) {
          *p++ = '#';
          p = KeyText::put_int(p, s);
        } else {
          *p++ = s == 1 ? '-' : size_bucket(s);
          if (s % 16 == 0) *p++ = '%';                      // Triton's divisibility by 16
          if (ir::size_fixed_by_key(s, false)) *p++ = '!';  // exactly its power of two
        }
        // Every stride but a unit innermost one: vectors along another dim (a transposed
        // view) are aligned when all the others are (Emitter::outer_strides_aligned).
        if (d + 1 < rank || strides[d] != 1) *p++ = (strides[d] * es) % 16 == 0 ? 'a' : 'u';
      }
      if (rank > 0) {
        *p++ = strides[rank - 1] == 1 ? 'c' : 's';
        if (strides[rank - 1] != 1)
          if (int u = unit_stride_dim(*b); u >= 0) p = KeyText::put_int(p, u);
      }
      *p++ = reinterpret_cast<uintptr_t>(b->data_ptr()) % 16 == 0 ? 'A' : 'U';
      if (!groups.empty() && groups[i] >= 0) {  // may share memory with another argument
        *p++ = 'S';
        p = KeyText::put_int(p, groups[i]);
      }
      if (on_gpu) {
        *p++ = '@';
        *p++ = static_cast<char>('0' + b->device().index);
      }
      k.end(p);
      big |= frontend::needs_64bit_indexing(
          shape, static_cast<int64_t>(ranges[i].second - ranges[i].first) / es);
    } else if (params[i] == ParamKind::specialized || params[i] == ParamKind::specialized_int) {
      k.put("|=");
      if (std::holds_alternative<int64_t>(args[i])) {
        p = k.begin(KeyText::kIntChars);
        k.end(KeyText::put_int(p, std::get<int64_t>(args[i])));
      } else {
        k.put(fmt::format("{}", std::get<double>(args[i])));
      }
    } else if (const int64_t* v = std::get_if<int64_t>(&args[i])) {
      k.put("|i");
      big |= *v < INT32_MIN || *v > INT32_MAX;  // as Triton types such an int i64
    } else {
      k.put("|f");
    }
  }
  k.put(big ? "|L" : "|I");
  if (check_bounds) k.put("|B");
}

bool write_exact_signature(CallArgs args, const std::vector<ParamKind>& params, int64_t flags,
                           std::vector<int64_t>& out) {
  // Its length first: one resize (none on a thread's later calls), then stores.
  size_t words = 1;
  for (const CallArg& a : args) {
    const Buffer* b = buffer_arg(a);
    if (b && !b->defined()) return false;
    words += b ? 1 + 2 * b->shape().size() : 2;
  }
  out.resize(words);
  int64_t* p = out.data();
  *p++ = flags;
  struct Bytes {  // trivial: the scratch is not zeroed first
    uintptr_t lo, hi;
  };
  StackSpan<Bytes, 16> scratch(args.size());
  const std::span<Bytes> ranges = scratch.span();
  size_t tensors = 0;  // ranges[0, tensors): the tensors' bytes so far
  for (size_t i = 0; i < args.size(); ++i) {
    if (const Buffer* b = buffer_arg(args[i])) {
      const std::vector<int64_t>& shape = b->shape();
      const std::vector<int64_t>& strides = b->strides();
      const size_t rank = shape.size();
      const uintptr_t base = reinterpret_cast<uintptr_t>(b->data_ptr());
      const Device d = b->device();
      *p++ = 1 | static_cast<int64_t>(b->dtype()) << 8 | static_cast<int64_t>(d.is_cuda()) << 16 |
             int64_t{base % 16 == 0} << 17 | static_cast<int64_t>(d.index) << 24 |
             static_cast<int64_t>(rank) << 40;
      // Its shape and strides, and its bytes (rt::byte_range's): [lo, hi) in elements.
      int64_t lo = 0, hi = 1;
      for (size_t k = 0; k < rank; ++k) {
        p[k] = shape[k];
        p[rank + k] = strides[k];
        const int64_t extent = (shape[k] - 1) * strides[k];
        (extent < 0 ? lo : hi) += extent;
        if (shape[k] == 0) hi = lo;  // no elements: no bytes
      }
      p += 2 * rank;
      if (lo == hi) continue;
      const int64_t es = dtype_size(b->dtype());
      const Bytes r{base + static_cast<uintptr_t>(lo * es), base + static_cast<uintptr_t>(hi * es)};
      for (size_t j = 0; j < tensors; ++j)  // sharing memory: groups by address
        if (r.lo < ranges[j].hi && ranges[j].lo < r.hi) return false;
      ranges[tensors++] = r;
    } else if (params[i] == ParamKind::specialized || params[i] == ParamKind::specialized_int) {
      const int64_t* v = std::get_if<int64_t>(&args[i]);
      *p++ = v ? 2 : 3;
      *p++ = v ? *v : std::bit_cast<int64_t>(std::get<double>(args[i]));
    } else {
      const int64_t* v = std::get_if<int64_t>(&args[i]);
      *p++ = v ? (*v < INT32_MIN || *v > INT32_MAX ? 5 : 4) : 6;
      *p++ = 0;
    }
  }
  return true;
}

}  // namespace tessel::detail
