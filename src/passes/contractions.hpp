// The layout stage's first part: contractions, sums of outer products.
//
// `ts::sum(x(tm, tk, ts::newaxis) * y(ts::newaxis, tk, tn), 1)` (a matmul written as a
// broadcast multiply and a sum, the form Helion users write before hl.dot) would, held
// in the nest's layout, materialize the [tm, tk, tn] product: 64 x 32 x 64 elements are
// 1024 registers per thread at 4 warps. A contraction is never materialized. Its operands
// keep layouts of their own over their own dims ([tm, tk] and [tk, tn]: 16-byte vectors
// along each one's innermost dim), are written to shared memory, and each thread sums the
// products for the [tm, tn] elements it holds in the nest's layout, one tk at a time
// (codegen emit_contract.cpp): the nest has no slot for tk. Triton lowers tl.dot on CUDA
// cores the same way (operands converted through shared memory into dot-operand layouts).
//
// A Reduce is a contraction when it is a sum (not keepdim) over dim d of an f32 multiply
// used by nothing else; each factor is a load (tile, ts::all, scalar or newaxis indices,
// not a gather, not a multicast tensor) seen through casts to f32, TF32 roundings
// (ts::dot) and views (size-1 dims), each used once; each factor has d's Sym k and lacks a
// dim of the product that the other has (an outer product: otherwise the product costs no
// more than its factors, and a reduction across threads serves it better); nothing in the
// nest but the factors has k in its shape; and between the factors' first node and the
// sum, the block writes no memory and runs no loop (the loads move to the sum). A factor
// read by two sums, or computed (a scaled load), leaves its sums products: f(0) of a
// masked-out element need not be 0. Contractions of f16 or bf16 loads may run on tensor
// cores (passes/tensor_cores.hpp).
#pragma once

#include <set>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

struct Layout;

/// One factor of a contraction: its nodes in block order (the load first, its last node
/// the factor the multiply reads).
struct ContractionFactor {
  std::vector<const ir::Node*> nodes;
  const ir::Node* load() const { return nodes.front(); }
  const ir::Node* value() const { return nodes.back(); }
};

struct ContractionMatch {
  const ir::Node* sum = nullptr;      // the Reduce
  const ir::Node* product = nullptr;  // the multiply it reduces
  const ir::Sym* k = nullptr;         // the contracted dim
  ContractionFactor factor[2];
};

/// The contractions of top-level loop `loop` (nested loops included), in program order.
std::vector<ContractionMatch> find_contractions(const ir::Node* loop);

/// The nodes the nest's layout does not hold (the factors and the products).
std::set<const ir::Node*> staged_nodes(const std::vector<ContractionMatch>& found);

}  // namespace tessel::passes
