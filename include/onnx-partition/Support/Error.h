//===- Support/Error.h - Recoverable errors as values -----------*- C++ -*-===//
//
// Library code never prints and carries on, and never exits: it returns an
// Error or an Expected<T> whose message names its subject (file, node, flag).
// Only the tool's main() turns an error into one "error:" line and an exit
// code. Broken invariants are asserts, not Errors. A caller that acts on a
// failure asks its kind() and cause(), never its message (issue 32).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_ERROR_H
#define ONNXP_SUPPORT_ERROR_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace onnxp {

/// A failure with a message, or success. Converts to true on failure, so the
/// idiom is `if (Error E = doThing()) return E;`.
class [[nodiscard]] Error {
public:
  /// Exit code the tool uses for this error: 1 for bad input, 2 for usage.
  enum class Kind { Input = 1, Usage = 2, Internal = 3 };
  /// What a failure means to a caller that acts on it, beside its Kind
  /// (as HiGHS's model status beside its run status). Most are Unspecified.
  enum class Cause {
    Unspecified,
    /// The algorithm found no plan within the platform's memory (or its
    /// plan does not fit): Partition/MemoryFit.h searches what would fit.
    DoesNotFit,
    /// A DoesNotFit that is proven: pipeline-ilp showed that no 1F1B
    /// pattern fits (the memory sweep marks the point infeasible).
    NoFeasiblePattern,
  };

  static Error success() { return Error(); }
  Error(Kind K, std::string Message) : Msg(std::move(Message)), K(K), Failed(true) {}

  explicit operator bool() const { return Failed; }
  const std::string &message() const { return Msg; }
  Kind kind() const { return K; }
  Cause cause() const { return C; }
  /// Cause DoesNotFit or NoFeasiblePattern.
  bool doesNotFit() const { return C == Cause::DoesNotFit || C == Cause::NoFeasiblePattern; }
  int exitCode() const { return K == Kind::Usage ? 2 : 1; }

  /// Returns a copy whose message is prefixed with Context + ": ".
  Error withContext(const std::string &Context) const {
    Error E = *this;
    E.Msg = Context + ": " + Msg;
    return E;
  }
  /// Returns a copy with cause Why.
  Error withCause(Cause Why) const {
    Error E = *this;
    E.C = Why;
    return E;
  }

private:
  Error() = default;
  std::string Msg;
  Kind K = Kind::Input;
  Cause C = Cause::Unspecified;
  bool Failed = false;
};

namespace detail {
template <typename... Ts> std::string concat(const Ts &...Parts) {
  std::ostringstream OS;
  OS.precision(10);
  (OS << ... << Parts);
  return OS.str();
}
} // namespace detail

/// Builds an input error from the streamed parts: makeError("node '", N, "'").
template <typename... Ts> Error makeError(const Ts &...Parts) {
  return Error(Error::Kind::Input, detail::concat(Parts...));
}
/// An input error with cause DoesNotFit: the algorithm found no plan in
/// the platform's memory.
template <typename... Ts> Error makeDoesNotFitError(const Ts &...Parts) {
  return makeError(Parts...).withCause(Error::Cause::DoesNotFit);
}
/// A usage error (bad flag or flag combination): exit code 2.
template <typename... Ts> Error makeUsageError(const Ts &...Parts) {
  return Error(Error::Kind::Usage, detail::concat(Parts...));
}
/// An internal error: a plan that fails validation, an impossible state that
/// is cheaper to report than to assert on.
template <typename... Ts> Error makeInternalError(const Ts &...Parts) {
  return Error(Error::Kind::Internal, "internal error: " + detail::concat(Parts...));
}

/// A value or the Error that prevented it.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T Value) : Storage(std::move(Value)) {}
  Expected(Error E) : Storage(std::move(E)) {
    assert(std::get<Error>(Storage) && "Expected built from success");
  }

  explicit operator bool() const { return std::holds_alternative<T>(Storage); }
  T &operator*() { return std::get<T>(Storage); }
  const T &operator*() const { return std::get<T>(Storage); }
  T *operator->() { return &std::get<T>(Storage); }
  const T *operator->() const { return &std::get<T>(Storage); }
  /// The error; only valid when the Expected holds no value.
  Error takeError() const { return std::get<Error>(Storage); }

private:
  std::variant<T, Error> Storage;
};

} // namespace onnxp

/// Propagates a failing Error from the enclosing function.
#define ONNXP_RETURN_IF_ERROR(expr)                                                                          \
  do {                                                                                                       \
    if (::onnxp::Error OnnxpErr_ = (expr)) return OnnxpErr_;                                                 \
  } while (false)

#endif // ONNXP_SUPPORT_ERROR_H
