#include "codegen/names.hpp"

#include <fmt/format.h>

#include <cctype>

namespace tessel::codegen {

namespace {

// Words a user's name must not take: C++ keywords, the CUDA built-ins, functions and
// macros' helpers generated code names, and the locals of its fixed parts.
const std::set<std::string>& reserved() {
  static const std::set<std::string> words = {
      // C++ keywords and literals
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // CUDA built-ins and namespaces
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "ts", "std", "cub", "cuda", "min",
      "max", "abs", "exp", "expf", "exp2", "exp2f", "log", "logf", "log2", "log2f", "sqrt", "sqrtf",
      "rsqrt", "rsqrtf", "sin", "sinf", "cos", "cosf", "tanh", "tanhf", "floor", "floorf", "ceil",
      "ceilf", "erf", "erff", "pow", "powf", "fabs", "fabsf",
      // locals of the generated code's fixed parts
      "tid", "r", "g", "i", "j", "k", "e", "v", "w", "vi", "src", "bc", "pid", "rem", "total",
      "per", "pid_begin", "pid_end", "pid_next", "first", "group", "gsize", "p2", "off", "ok"};
  return words;
}

// tessel's own names: lowercase letters, then digits, then optional _<digits> groups
// (v12, lb7_0, arg0, p12_1).
bool looks_internal(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::islower(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i == s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  while (i < s.size()) {
    if (s[i] == '_') {
      ++i;
      if (i == s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    } else if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
    ++i;
  }
  return true;
}

// Whether node n carries a name the user gave (an unnamed argument's Node::name is arg<i>).
bool user_named(const ir::Node* n) {
  return !n->name.empty() && n->op != ir::Op::ShapeCheck &&
         !(n->op == ir::Op::Arg && n->name == fmt::format("arg{}", n->ival));
}

}  // namespace

std::string Names::identifier(const std::string& s) {
  std::string out;
  for (char c : s) {
    char k = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (k != '_' || out.empty() || out.back() != '_') out += k;  // "__" is reserved in C++
  }
  if (out.empty()) return "u_";
  // A leading digit is invalid; a leading '_' may be reserved (_X, __x); TS_ and ts_ are
  // tessel's macros and helpers.
  if (out[0] == '_')
    out = "u" + out;
  else if (std::isdigit(static_cast<unsigned char>(out[0])) || out.rfind("TS_", 0) == 0 ||
           out.rfind("ts_", 0) == 0)
    out = "u_" + out;
  if (reserved().count(out) || looks_internal(out)) out += '_';
  return out;
}

// `a`_`b` without a doubled '_' (reserved in C++): int_ + size0 -> int_size0.
static std::string join(const std::string& a, const std::string& b) {
  return (!a.empty() && a.back() == '_' ? a.substr(0, a.size() - 1) : a) + "_" + b;
}

std::string Names::unique(const std::string& base) {
  std::string name = base;
  for (int k = 2; used_.count(name); ++k) name = fmt::format("{}_{}", base, k);
  used_.insert(name);
  return name;
}

std::string Names::memo(const ir::Node* n, const std::string& role, const std::string& base) {
  auto [it, fresh] = of_.try_emplace({n, role});
  if (fresh) it->second = unique(base);
  return it->second;
}

std::string Names::tensor(const ir::Node* t) {
  std::string fallback =
      t->op == ir::Op::Arg ? fmt::format("arg{}", t->ival) : fmt::format("buf{}", t->id);
  // An unnamed argument's Node::name is its fallback.
  return memo(t, "tensor", user_named(t) ? identifier(t->name) : fallback);
}

std::string Names::of_tensor(const ir::Node* t, const std::string& what) {
  return memo(t, what, join(tensor(t), what));
}

std::string Names::value(const ir::Node* n, const std::string& fallback) {
  // A device scalar has a pointer parameter ("ptr") and a value read from it.
  bool ptr = fallback == "ptr";
  std::string base = fmt::format("{}{}", fallback, n->id);
  if (user_named(n)) {
    base = identifier(n->name);
    if (ptr) base = join(base, "ptr");
    if (inits_.count(n)) base = join(base, "init");  // the name is its carried variable's
  } else if ((n->op == ir::Op::Load || n->op == ir::Op::DeviceScalar) && user_named(n->args[0])) {
    base = join(tensor(n->args[0]), ptr ? "ptr" : std::to_string(n->id));
  } else if (fallback == "s" && n->op == ir::Op::Cast && user_named(n->args[0])) {
    // A host parameter holding a named argument converted (an f16 kernel's scale: scale_f16).
    base = join(identifier(n->args[0]->name), dtype_name(n->dtype));
  }
  return memo(n, "value:" + fallback, base);
}

std::string Names::carried(const ir::Node* c, const ir::Node* init, bool next) {
  bool named = user_named(init);
  std::string base = named ? identifier(init->name) : fmt::format("c{}", c->id);
  std::string var = memo(c, "carried", base);
  if (!next) return var;
  return memo(c, "next", named ? join(var, "next") : fmt::format("y{}", c->id));
}

void Names::name_carried_first(const ir::Block& b) {
  ir::walk(b, [&](const ir::Node* n) {
    if (n->op != ir::Op::Loop) return;
    for (size_t i = 0; i < n->carried.size(); ++i)
      if (user_named(n->inits[i])) {
        carried(n->carried[i], n->inits[i]);
        inits_.insert(n->inits[i]);
      }
  });
}

}  // namespace tessel::codegen
