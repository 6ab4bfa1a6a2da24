// The identifiers of one generated kernel: the user's names where the trace knows them
// (ts::kernel parameter names, Tensor::named, Value::named: ir::Node::name), else tessel's
// (arg0, buf5, v12). Internal to codegen.
//
//   ts::kernel("rms_norm", {"x", "weight", "eps"}, ...)   ->  const float* x, int x_size0,
//   ts::Tensor out = ts::empty_like(x).named("out");          float* out, int out_stride0,
//   ts::Value row = x(tm, ts::all).named("row");              float row[TS_N];
//   (a load of x, unnamed)                                     float x_18[TS_N];  (IR %18)
//
// A user's name is made a C identifier (other characters become '_'; a leading digit,
// underscore or ts_/TS_ prefix gets a `u_` prefix: `_x` -> `u_x`), kept clear of C++ keywords, CUDA
// and math names the generated code uses, and of the form of tessel's own names (letters then
// digits, such as v12 or lb7_0: such a name gets a trailing '_'), and made unique within
// the kernel (x, x_2, ...).
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/ir.hpp"

namespace tessel::codegen {

class Names {
 public:
  /// The name of tensor `t` (Arg or Alloc): its user name, else arg<i> / buf<id>.
  std::string tensor(const ir::Node* t);
  /// A name derived from tensor t's (`<tensor>_<what>`: x_size0, x_stride1, size_ptr).
  std::string of_tensor(const ir::Node* t, const std::string& what);
  /// The name of value `n` (a tile array or a scalar): its user name, else for a load of a
  /// named tensor `<tensor>_<id>`, for a host parameter (fallback "s") converting a named
  /// argument `<name>_<dtype>` (scale_f16), else `<fallback><id>` (v12, s3, ds4). Stable: the same
  /// node and role give the same name.
  std::string value(const ir::Node* n, const std::string& fallback = "v");
  /// The variable of loop-carried value `c` whose initial value is `init`: init's user
  /// name (acc), else c<id>; `next` gives the variable of its next value (acc_next, y<id>).
  std::string carried(const ir::Node* c, const ir::Node* init, bool next = false);

  /// Gives the user's names of carried values' initial values (`acc`) to the carried
  /// variables of the loops in `b` before anything else takes them; the initial values
  /// become acc_init.
  void name_carried_first(const ir::Block& b);

  /// `s` as a C identifier clear of reserved names (not yet unique).
  static std::string identifier(const std::string& s);

 private:
  /// `base`, or base_2, base_3, ... when taken.
  std::string unique(const std::string& base);
  std::string memo(const ir::Node* n, const std::string& role, const std::string& base);
  std::set<std::string> used_;
  std::set<const ir::Node*> inits_;  // named initial values of carried values
  std::map<std::pair<const ir::Node*, std::string>, std::string> of_;
};

}  // namespace tessel::codegen
