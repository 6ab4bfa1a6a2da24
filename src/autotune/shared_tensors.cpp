#include "autotune/shared_tensors.hpp"

#include <fmt/format.h>

#include "driver/cuda_api.hpp"
#include "interp/host_program.hpp"

namespace tessel::autotune {

namespace {

// Elements from the first to one past the last element of a view (non-negative strides).
int64_t span_elems(const Buffer& b) {
  if (b.numel() == 0) return 0;
  int64_t last = 0;
  for (int d = 0; d < b.dim(); ++d) last += (b.size(d) - 1) * b.stride(d);
  return last + 1;
}

std::vector<const ir::Node*> allocs_of(const ir::Graph& g) {
  std::vector<const ir::Node*> out;
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Alloc) out.push_back(n);
  return out;
}

// Tensors stored to anywhere in the graph.
std::vector<const ir::Node*> written(const ir::Graph& g) {
  std::vector<const ir::Node*> out;
  ir::walk(g.host, [&](const ir::Node* n) {
    if (ir::writes_memory(n) && std::find(out.begin(), out.end(), n->args[0]) == out.end())
      out.push_back(n->args[0]);
  });
  return out;
}

}  // namespace

SharedTensors::SharedTensors(const ir::Graph& g, detail::CallArgs args, int device)
    : args_(args.begin(), args.end()), device_(device) {
  std::vector<const ir::Node*> writes = written(g);
  arg_views_.resize(args.size());
  arg_entry_.assign(args.size(), -1);
  arg_values_.resize(args.size());
  auto add_entry = [&](int64_t bytes, bool restore) {
    Entry e;
    e.bytes = bytes;
    e.restore = restore;
    e.ptr = rt::device_alloc_shareable(bytes, device);
    entries_.push_back(e);  // freed by the destructor even if the handle throws
    entries_.back().handle = rt::ipc_handle(e.ptr, device);
    return static_cast<int>(entries_.size() - 1);
  };
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      if (const Buffer* b = detail::buffer_arg(args[i])) {
        bool is_written = std::find_if(writes.begin(), writes.end(), [&](const ir::Node* n) {
                            return n->op == ir::Op::Arg && n->ival == static_cast<int64_t>(i);
                          }) != writes.end();
        int e = add_entry(span_elems(*b) * dtype_size(b->dtype()), is_written);
        arg_entry_[i] = e;
        arg_views_[i] = Buffer::from_blob(entries_[e].ptr, b->shape(), b->strides(), b->dtype(),
                                          b->device(), {});
        arg_values_[i].shape = &arg_views_[i].shape();
        arg_values_[i].strides = &arg_views_[i].strides();
      } else if (const int64_t* v = std::get_if<int64_t>(&args[i])) {
        arg_values_[i].ivalue = *v;
        arg_values_[i].fvalue = static_cast<double>(*v);
      } else {
        arg_values_[i].fvalue = std::get<double>(args[i]);
        arg_values_[i].ivalue = static_cast<int64_t>(arg_values_[i].fvalue);
      }
    }
    for (const ir::Node* n : g.host) {
      if (n->op == ir::Op::ShapeCheck)
        ir::check_shape(g, n, ir::eval_host_int(n->args[0], arg_values_),
                        ir::eval_host_int(n->args[1], arg_values_));
      if (n->op != ir::Op::Alloc) continue;
      std::vector<int64_t> shape;
      for (const ir::Node* e : n->args) shape.push_back(ir::eval_host_int(e, arg_values_));
      bool filled = n->ival == ir::fill_value;
      int e = add_entry(rt::check_alloc_shape(g, n, shape), filled);
      alloc_views_.push_back(Buffer::from_blob(
          entries_[e].ptr, shape, ir::alloc_strides(n, arg_values_), n->dtype, cuda(device), {}));
      alloc_fill_.emplace_back(filled, n->fval);
    }
  } catch (...) {
    for (const Entry& e : entries_) rt::device_free_shareable(e.ptr, device_);
    throw;
  }
  reset();
}

SharedTensors::~SharedTensors() {
  for (const Entry& e : entries_) rt::device_free_shareable(e.ptr, device_);
}

void SharedTensors::reset() {
  rt::set_device(device_);
  for (size_t i = 0; i < args_.size(); ++i) {
    if (arg_entry_[i] < 0) continue;
    const Buffer& user = *std::get<const Buffer*>(args_[i]);
    const Entry& e = entries_[arg_entry_[i]];
    if (e.bytes > 0) rt::memcpy_dtod(e.ptr, user.data_ptr(), e.bytes);
  }
  for (size_t j = 0; j < alloc_views_.size(); ++j) {
    if (alloc_fill_[j].first)
      alloc_views_[j].fill(alloc_fill_[j].second, {});
    else
      rt::memset_d8(alloc_views_[j].data_ptr(), 0,
                    alloc_views_[j].numel() * dtype_size(alloc_views_[j].dtype()));
  }
  rt::stream_synchronize();
}

std::optional<rt::HostEnv> SharedTensors::env(const ir::Graph& g) const {
  rt::HostEnv env;
  env.graph = &g;
  env.args = arg_values_;
  env.arg_buffers.resize(arg_views_.size());
  for (size_t i = 0; i < arg_views_.size(); ++i)
    env.arg_buffers[i] = arg_views_[i].defined() ? &arg_views_[i] : nullptr;
  env.device = cuda(device_);
  std::vector<const ir::Node*> allocs = allocs_of(g);
  if (allocs.size() != alloc_views_.size()) return std::nullopt;
  for (size_t j = 0; j < allocs.size(); ++j) {
    if (allocs[j]->dtype != alloc_views_[j].dtype()) return std::nullopt;
    for (size_t d = 0; d < allocs[j]->args.size(); ++d)
      if (d >= alloc_views_[j].shape().size() ||
          ir::eval_host_int(allocs[j]->args[d], arg_values_) !=
              alloc_views_[j].size(static_cast<int>(d)))
        return std::nullopt;
    env.set_alloc(allocs[j], alloc_views_[j]);
  }
  return env;
}

std::optional<std::pair<int, int64_t>> SharedTensors::locate(uint64_t p) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    auto base = reinterpret_cast<uint64_t>(entries_[i].ptr);
    if (p >= base && p < base + static_cast<uint64_t>(std::max<int64_t>(entries_[i].bytes, 1)))
      return std::make_pair(static_cast<int>(i), static_cast<int64_t>(p - base));
  }
  return std::nullopt;
}

std::vector<Buffer> SharedTensors::checked(const ir::Graph& g) const {
  std::optional<rt::HostEnv> e = env(g);
  if (!e) return {};
  std::vector<Buffer> out;
  std::vector<const ir::Node*> nodes(g.outputs.begin(), g.outputs.end());
  for (const ir::Node* w : written(g))
    if (std::find(nodes.begin(), nodes.end(), w) == nodes.end()) nodes.push_back(w);
  for (const ir::Node* n : nodes) out.push_back(e->tensor(n));
  return out;
}

}  // namespace tessel::autotune
