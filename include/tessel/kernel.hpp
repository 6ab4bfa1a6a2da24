// ts::kernel: turns a C++ lambda written in the tessel language into a callable kernel.
// Helion: @helion.kernel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tessel/buffer.hpp"
#include "tessel/config.hpp"
#include "tessel/language.hpp"
#include "tessel/stream.hpp"

namespace tessel {

namespace detail {

/// One call argument: a Buffer (the caller's, not copied: it lives until the call
/// returns), an integer or a floating-point number.
using CallArg = std::variant<const Buffer*, int64_t, double>;
/// A call's arguments, in the lambda's parameter order.
using CallArgs = std::span<const CallArg>;

/// The Buffer of argument `a`, or nullptr for a number.
inline const Buffer* buffer_arg(const CallArg& a) {
  const Buffer* const* b = std::get_if<const Buffer*>(&a);
  return b ? *b : nullptr;
}

/// How the lambda takes each parameter.
enum class ParamKind : uint8_t {
  tensor,          // ts::Tensor
  symbolic,        // ts::Value: a scalar argument, a runtime parameter of the generated code
  specialized,     // a C++ floating-point number: its value is a constant of the generated
                   // code (part of the key)
  specialized_int  // a C++ integer or bool, likewise (a fractional argument is an error)
};

/// Calls the user's lambda with symbolic arguments; returns the returned tensors' nodes.
using TraceFn =
    std::function<std::vector<ir::Node*>(const std::vector<ir::Node*>& arg_nodes, CallArgs args)>;

/// The values a C++ number parameter can hold: an integer's [lo, hi] (bool: [0, 1]); a
/// float's finite values up to f32's largest (`f32`: a finite value beyond it is refused,
/// as C++ leaves its conversion undefined); a double takes any.
struct ParamRange {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  bool f32 = false;
};

class KernelImpl;
/// `has_captures`: the lambda captures variables (traced on every call unless
/// Settings::static_captures: see ts::kernel). `param_names`: empty, or one per parameter.
std::shared_ptr<KernelImpl> make_kernel(std::string name, std::vector<std::string> param_names,
                                        std::vector<ParamKind> params,
                                        std::vector<ParamRange> param_ranges, TraceFn fn,
                                        Settings settings, SourceLoc defined_at, bool has_captures);
/// `called_at`: the caller's line, where errors of the call (wrong arguments) point.
std::vector<Buffer> call_kernel(KernelImpl& k, CallArgs args, void* stream, SourceLoc called_at);
std::string kernel_ir(KernelImpl& k, CallArgs args, SourceLoc called_at);
std::vector<std::string> kernel_cuda(KernelImpl& k, CallArgs args, bool compile,
                                     SourceLoc called_at);
Config autotune_kernel(KernelImpl& k, CallArgs args, SourceLoc called_at);

template <class T>
ParamKind param_kind() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>)
    return ParamKind::tensor;
  else if constexpr (std::is_same_v<U, Value>)
    return ParamKind::symbolic;
  else {
    static_assert(std::is_arithmetic_v<U>,
                  "kernel parameters must be ts::Tensor, ts::Value or C++ numbers");
    return std::is_integral_v<U> ? ParamKind::specialized_int : ParamKind::specialized;
  }
}

/// Whether a lambda parameter of type T is one a kernel takes (param_kind's), by value or
/// const reference (a non-const reference would bind to the trace's temporary).
template <class T>
inline constexpr bool valid_param =
    (std::is_same_v<std::remove_cvref_t<T>, Tensor> ||
     std::is_same_v<std::remove_cvref_t<T>, Value> ||
     std::is_arithmetic_v<std::remove_cvref_t<T>>)&&!(std::is_lvalue_reference_v<T> &&
                                                      !std::is_const_v<std::remove_reference_t<T>>);

template <class T>
ParamRange param_range() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_integral_v<U>) {
    // Both ends as int64_t: a uint64_t parameter takes [0, INT64_MAX] (CallArg's range).
    constexpr auto lo = std::numeric_limits<U>::min();
    constexpr auto hi = std::numeric_limits<U>::max();
    return ParamRange{static_cast<int64_t>(lo),
                      static_cast<uint64_t>(hi) > static_cast<uint64_t>(INT64_MAX)
                          ? INT64_MAX
                          : static_cast<int64_t>(hi)};
  } else {
    return ParamRange{.f32 = std::is_same_v<U, float>};
  }
}

template <class T>
T convert_param(ir::Node* node, const CallArg& a) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>)
    return Tensor(node);
  else if constexpr (std::is_same_v<U, Value>)
    return Value::wrap(node);
  else if constexpr (std::is_integral_v<U>)
    return static_cast<U>(std::holds_alternative<int64_t>(a)
                              ? std::get<int64_t>(a)
                              : static_cast<int64_t>(std::get<double>(a)));
  else
    return static_cast<U>(std::holds_alternative<double>(a)
                              ? std::get<double>(a)
                              : static_cast<double>(std::get<int64_t>(a)));
}

inline void collect_outputs(const Tensor& t, std::vector<ir::Node*>& out) {
  out.push_back(t.node());
}
template <class... T>
void collect_outputs(const std::tuple<T...>& t, std::vector<ir::Node*>& out) {
  std::apply([&](const auto&... x) { (collect_outputs(x, out), ...); }, t);
}

/// What a call returns for a kernel lambda returning T: nothing, a Buffer for a ts::Tensor,
/// a std::tuple of Buffers for one of ts::Tensors; `valid` false for anything else.
template <class T>
struct OutputType {
  using type = void;
  static constexpr bool valid = false;
};
template <>
struct OutputType<void> {
  using type = void;
  static constexpr bool valid = true;
};
template <>
struct OutputType<Tensor> {
  using type = Buffer;
  static constexpr bool valid = true;
};
template <class... T>
struct OutputType<std::tuple<T...>> {
  using type = std::tuple<typename OutputType<T>::type...>;
  static constexpr bool valid = (OutputType<T>::valid && ...);
};

/// A lambda's call operator: its result and parameter types; `mutable_call` for a mutable
/// lambda's (non-const) one, which a kernel does not take.
template <class Sig>
struct LambdaTraits;
template <class C, class R, class... A>
struct LambdaTraits<R (C::*)(A...) const> {
  using result = R;
  using params = std::tuple<A...>;
  static constexpr bool mutable_call = false;
};
template <class C, class R, class... A>
struct LambdaTraits<R (C::*)(A...)> : LambdaTraits<R (C::*)(A...) const> {
  static constexpr bool mutable_call = true;
};

/// Whether F has one call operator of explicit parameter types (not a generic lambda's
/// template, whose parameter types a kernel cannot read).
template <class F>
concept PlainCallable = requires {
  &F::operator();
};

/// Whether the last of A... (decayed) is a ts::Stream (a call's stream goes first).
template <class... A>
constexpr bool stream_last() {
  if constexpr (sizeof...(A) == 0)
    return false;
  else
    return std::is_same_v<
        std::remove_cvref_t<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>>, Stream>;
}

template <class R>
R make_result(std::vector<Buffer>&& outs) {
  if constexpr (std::is_void_v<R>) {
    return;
  } else if constexpr (std::is_same_v<R, Buffer>) {
    return std::move(outs.at(0));
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) { return R{std::move(outs.at(I))...}; }
    (std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

/// A number passed for a ts::Value or C++ number parameter: any C++ integer, bool or
/// floating-point value (a fraction for an integer parameter is a UserError of the call).
struct NumberArg {
  // An unsigned value past INT64_MAX travels as a double, which the call's range check
  // refuses (CallArg holds int64_t).
  template <class T>
  requires std::is_integral_v<T> NumberArg(T v)
      : value(std::is_unsigned_v<T> && static_cast<uint64_t>(v) > uint64_t{INT64_MAX}
                  ? CallArg(static_cast<double>(v))
                  : CallArg(static_cast<int64_t>(v))) {}
  template <class T>
  requires std::is_floating_point_v<T> NumberArg(T v) : value(static_cast<double>(v)) {}
  CallArg value;
};

/// What a call passes for a lambda parameter of type P: a Buffer for ts::Tensor, else a
/// number.
template <class P>
using ArgOf =
    std::conditional_t<std::is_same_v<std::remove_cvref_t<P>, Tensor>, const Buffer&, NumberArg>;

inline CallArg to_call_arg(const Buffer& b) { return &b; }
inline CallArg to_call_arg(const NumberArg& n) { return n.value; }

/// The call's arguments, on the caller's stack (no Buffer is copied: a call runs this
/// every time).
template <class... A>
std::array<CallArg, sizeof...(A)> call_args(const A&... args) {
  return {to_call_arg(args)...};
}

/// Whether a call of A... (decayed) can take the shape of one of Kernel's call operators
/// for a lambda of `n` parameters: the arguments, optionally after a Stream and before a
/// Loc. Only the count and those two positions are checked (argument types are checked by
/// the call operators themselves).
template <size_t n, class... A>
constexpr bool call_count_ok() {
  using All = std::tuple<std::remove_cvref_t<A>..., void>;
  constexpr size_t c = sizeof...(A);
  if constexpr (c == 0) {
    return n == 0;
  } else {
    constexpr bool stream_first = std::is_same_v<std::tuple_element_t<0, All>, Stream>;
    constexpr bool loc_last = std::is_same_v<std::tuple_element_t<c - 1, All>, Loc>;
    return c == n || (c == n + 1 && (stream_first || loc_last)) ||
           (c == n + 2 && stream_first && loc_last);
  }
}

/// Whether arguments A... (decayed) are what a kernel of parameters P... takes after its
/// leading arguments (kernel.ir, kernel.cuda, kernel.autotune): one per parameter, each
/// converting to it, optionally followed by a Loc.
template <class... P>
struct ArgsFor {
  template <class... A>
  static constexpr bool match() {
    if constexpr (sizeof...(A) == sizeof...(P))
      return (std::is_convertible_v<const A&, ArgOf<P>> && ...);
    else if constexpr (sizeof...(A) == sizeof...(P) + 1)
      return std::is_same_v<
                 std::remove_cvref_t<std::tuple_element_t<sizeof...(P), std::tuple<A...>>>, Loc> &&
             match_first<A...>(std::make_index_sequence<sizeof...(P)>{});
    else
      return false;
  }
  template <class... A, size_t... I>
  static constexpr bool match_first(std::index_sequence<I...>) {
    return (std::is_convertible_v<const std::tuple_element_t<I, std::tuple<A...>>&, ArgOf<P>> &&
            ...);
  }
};

/// false, for a static_assert in a template that must not be instantiated.
template <class...>
inline constexpr bool kNever = false;

}  // namespace detail

/// A compiled-on-demand kernel. Call it with Buffers and numbers in the lambda's
/// parameter order (P...: the lambda's parameter types): it traces once per
/// specialization key (dtypes, ranks, size buckets, alignment:
/// src/runtime/call_key.cpp write_argument_key),
/// compiles with NVRTC for the arguments' GPU or runs on the CPU interpreter for CPU
/// Buffers (or when TESSEL_INTERPRET=1), and returns what the lambda returns
/// (Buffer, std::tuple of Buffers, or nothing).
/// Errors: UserError for wrong arguments (pointing at the caller's line) or kernel bugs
/// (naming the kernel and its line), RuntimeError when the GPU or NVRTC fails.
// The message of kernel.ir, kernel.cuda and kernel.autotune refusing their arguments.
#define TESSEL_OTHER_ARGUMENTS                                                               \
  "tessel: kernel.ir, kernel.cuda (after its `compile` flag) and kernel.autotune take the "  \
  "kernel lambda's arguments in order, as a call does: a ts::Buffer for each ts::Tensor, a " \
  "number for each ts::Value or C++ number; these are another count or another type"

template <class R, class... P>
class Kernel {
 public:
  explicit Kernel(std::shared_ptr<detail::KernelImpl> impl) : impl_(std::move(impl)) {}
  R operator()(detail::ArgOf<P>... args, Loc loc = Loc::current()) const {
    return detail::make_result<R>(
        detail::call_kernel(*impl_, detail::call_args(args...), nullptr, SourceLoc::from(loc)));
  }
  /// The same call, on `stream` (asynchronous: no host synchronization).
  R operator()(Stream stream, detail::ArgOf<P>... args, Loc loc = Loc::current()) const {
    return detail::make_result<R>(detail::call_kernel(*impl_, detail::call_args(args...),
                                                      stream.handle, SourceLoc::from(loc)));
  }
  /// A call whose count of arguments differs from the lambda's parameter count: refused
  /// at compile time with that message (the compiler's note shows the two counts). It
  /// returns R so that the caller's use of the result adds no error of its own.
  template <class... A>
  requires(!detail::call_count_ok<sizeof...(P), A...>()) R operator()(const A&...) const {
    if constexpr (detail::stream_last<A...>())
      static_assert(detail::kNever<A...>,
                    "tessel: a kernel call's ts::Stream goes first, before the kernel lambda's "
                    "arguments: k(stream, x, ...)");
    else
      static_assert(sizeof...(A) == sizeof...(P),
                    "tessel: a kernel call takes the kernel lambda's arguments in order (a "
                    "Buffer for each ts::Tensor, a number for each ts::Value or C++ number), "
                    "optionally after a ts::Stream; this call passes another count");
    return R();  // never instantiated without the error above
  }
  /// A call with the lambda's count of arguments of which one does not convert to its
  /// parameter's (a number for a ts::Tensor, a Buffer for a number): refused at compile
  /// time with that message (the compiler's note names the argument types).
  template <class... A>
  requires(sizeof...(A) == sizeof...(P)) &&
      (!(std::is_convertible_v<const A&, detail::ArgOf<P>> && ...)) R operator()(
          const A&...) const {
    static_assert(detail::kNever<A...>,
                  "tessel: a kernel call's arguments follow the kernel lambda's parameters in "
                  "order: a ts::Buffer for each ts::Tensor, a number for each ts::Value or C++ "
                  "number; an argument of this call has another type");
    return R();  // never instantiated without the error above
  }
  /// The IR traced for these arguments (text), without running the kernel.
  std::string ir(detail::ArgOf<P>... args, Loc loc = Loc::current()) const {
    return detail::kernel_ir(*impl_, detail::call_args(args...), SourceLoc::from(loc));
  }
  /// The CUDA C++ generated for these arguments (one source per launch), as on a GPU,
  /// without running: lowered for the GPU (TESSEL_TARGET_ARCH, else GPU 0, else sm_90
  /// without one). With compile = true each is also compiled with NVRTC for that
  /// architecture (works without a GPU); a failure throws UserError with NVRTC's log. Where
  /// a TESSEL_OVERRIDE_DIR file is taken in place of a launch's code (compile = true), that
  /// file's text (CUDA or PTX) is returned for it: what a GPU call would run.
  std::vector<std::string> cuda(bool compile, detail::ArgOf<P>... args,
                                Loc loc = Loc::current()) const {
    return detail::kernel_cuda(*impl_, detail::call_args(args...), compile, SourceLoc::from(loc));
  }
  /// Tunes the kernel now for these arguments (GPU Buffers), as the first call with
  /// Settings::autotune_effort does (effort quick when the kernel's is unset or none),
  /// and returns the best config; later calls with arguments of the same
  /// specialization use it. The disk cache is used as on a call. Do not call it while
  /// another thread calls the kernel. Errors: UserError for CPU Buffers, an invalid
  /// call, or when no config works (the message says why).
  Config autotune(detail::ArgOf<P>... args, Loc loc = Loc::current()) const {
    return detail::autotune_kernel(*impl_, detail::call_args(args...), SourceLoc::from(loc));
  }
  /// ir, cuda and autotune with arguments other than the lambda's parameters take (another
  /// count, or one of another type): refused at compile time with that message.
  template <class... A>
  requires(!detail::ArgsFor<P...>::template match<A...>()) std::string ir(const A&...)
  const {
    static_assert(detail::kNever<A...>, TESSEL_OTHER_ARGUMENTS);
    return {};
  }
  template <class... A>
  requires(!detail::ArgsFor<P...>::template match<A...>()) std::vector<std::string> cuda(
      bool, const A&...)
  const {
    static_assert(detail::kNever<A...>, TESSEL_OTHER_ARGUMENTS);
    return {};
  }
  template <class... A>
  requires(!detail::ArgsFor<P...>::template match<A...>()) Config autotune(const A&...)
  const {
    static_assert(detail::kNever<A...>, TESSEL_OTHER_ARGUMENTS);
    return {};
  }
  detail::KernelImpl& impl() const { return *impl_; }

 private:
  std::shared_ptr<detail::KernelImpl> impl_;
};
#undef TESSEL_OTHER_ARGUMENTS

namespace detail {
template <class R, class Params>
struct KernelOf;
template <class R, class... P>
struct KernelOf<R, std::tuple<P...>> {
  using type = Kernel<R, P...>;
};
}  // namespace detail

/// Defines a kernel named `name` from `fn`, a lambda taking ts::Tensor (tensor
/// arguments), ts::Value (symbolic scalar arguments) or C++ numbers (specialized scalar
/// arguments) and returning ts::Tensor, a std::tuple of them, or nothing. Helion:
/// @helion.kernel. `defined_at` (this call's line) is where errors that no line of the
/// kernel or of a call causes point (invalid settings).
///
/// Captured variables: a lambda that captures nothing is traced once per specialization.
/// A lambda with captures is traced again on every call and a call whose trace differs
/// (a captured variable changed what the kernel does) gets a specialization of its own,
/// as Helion specializes on a kernel's closure values: tessel cannot see what a C++
/// capture refers to, so this is the only way a by-reference capture stays current.
/// Tracing costs microseconds per call; when the captures never change (values captured
/// by copy, references to constants) set Settings::static_captures to trace once.
///
/// Parameter names (optional): `ts::kernel("rms_norm", {"x", "weight", "eps"}, lambda)`
/// names the parameters, in order, in generated CUDA, dumps and errors (`x`, `x_size0`,
/// `x_stride0` instead of `arg0`, ...); "" leaves one unnamed. C++ cannot see a lambda's
/// parameter names, so they are given here; name host allocations and values with
/// Tensor::named and Value::named. Names are made valid, unique C identifiers and change
/// no result and no cache key. Errors: UserError (at `defined_at`) when the count of names
/// differs from the lambda's parameter count.
template <class F>
auto kernel(std::string name, std::vector<std::string> param_names, F fn, Settings settings = {},
            Loc defined_at = Loc::current());

namespace detail {

/// ts::kernel for a lambda with one call operator (F: PlainCallable), its parameters and
/// result checked first: one message each, not the instantiations of the trace that follow.
template <class F>
auto typed_kernel(std::string name, std::vector<std::string> param_names, F fn, Settings settings,
                  Loc defined_at) {
  using Traits = detail::LambdaTraits<decltype(&F::operator())>;
  using Params = typename Traits::params;
  using Output = detail::OutputType<std::remove_cvref_t<typename Traits::result>>;
  using Out = typename Output::type;
  constexpr size_t N = std::tuple_size_v<Params>;
  using K = typename detail::KernelOf<Out, Params>::type;
  constexpr bool valid = []<size_t... I>(std::index_sequence<I...>) {
    return (detail::valid_param<std::tuple_element_t<I, Params>> && ...);
  }
  (std::make_index_sequence<N>{});
  if constexpr (!valid) {
    static_assert(valid,
                  "tessel: kernel parameters must be ts::Tensor, ts::Value or C++ numbers "
                  "(an integer, a floating-point number or a bool), by value or const "
                  "reference");
    return K(nullptr);
  } else if constexpr (!Output::valid) {
    static_assert(Output::valid,
                  "tessel: a kernel lambda returns nothing, a ts::Tensor or a std::tuple of "
                  "ts::Tensors (allocate results with ts::empty and store into them)");
    return K(nullptr);
  } else if constexpr (Traits::mutable_call) {
    static_assert(!Traits::mutable_call,
                  "tessel: a kernel lambda is not mutable (it is traced again on calls: "
                  "state it changes would change the kernel)");
    return K(nullptr);
  } else {
    std::vector<detail::ParamKind> kinds = [&]<size_t... I>(std::index_sequence<I...>) {
      return std::vector<detail::ParamKind>{
          detail::param_kind<std::tuple_element_t<I, Params>>()...};
    }
    (std::make_index_sequence<N>{});
    std::vector<detail::ParamRange> ranges = [&]<size_t... I>(std::index_sequence<I...>) {
      return std::vector<detail::ParamRange>{
          detail::param_range<std::tuple_element_t<I, Params>>()...};
    }
    (std::make_index_sequence<N>{});
    detail::TraceFn trace = [fn](const std::vector<ir::Node*>& nodes, detail::CallArgs args) {
      std::vector<ir::Node*> outs;
      [&]<size_t... I>(std::index_sequence<I...>) {
        if constexpr (std::is_void_v<typename Traits::result>) {
          fn(detail::convert_param<std::remove_cvref_t<std::tuple_element_t<I, Params>>>(
              nodes[I], args[I])...);
        } else {
          detail::collect_outputs(
              fn(detail::convert_param<std::remove_cvref_t<std::tuple_element_t<I, Params>>>(
                  nodes[I], args[I])...),
              outs);
        }
      }
      (std::make_index_sequence<N>{});
      return outs;
    };
    return K(detail::make_kernel(std::move(name), std::move(param_names), std::move(kinds),
                                 std::move(ranges), std::move(trace), std::move(settings),
                                 SourceLoc::from(defined_at), !std::is_empty_v<F>));
  }
}

}  // namespace detail

template <class F>
auto kernel(std::string name, std::vector<std::string> param_names, F fn, Settings settings,
            Loc defined_at) {
  if constexpr (!detail::PlainCallable<F>) {
    static_assert(detail::PlainCallable<F>,
                  "tessel: a kernel lambda's parameters have explicit types (ts::Tensor, "
                  "ts::Value or C++ numbers), not auto: tessel reads them to know each "
                  "argument's kind");
    return 0;
  } else {
    return detail::typed_kernel(std::move(name), std::move(param_names), std::move(fn),
                                std::move(settings), defined_at);
  }
}

/// The same kernel without parameter names (generated code calls them arg0, arg1, ...).
template <class F>
auto kernel(std::string name, F fn, Settings settings = {}, Loc defined_at = Loc::current()) {
  return kernel(std::move(name), std::vector<std::string>{}, std::move(fn), std::move(settings),
                defined_at);
}

}  // namespace tessel
