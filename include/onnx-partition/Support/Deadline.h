//===- Support/Deadline.h - When a run must end -----------------*- C++ -*-===//
//
// `--time-limit SECONDS` bounds the wall clock of the whole run (issue 20):
// every phase that searches (warm starts, candidate runs, polish, the
// solver, the DPs of the chain planners, the memory sweep) asks the one
// Deadline of the run how much is left and stops when it has passed. A
// Deadline is a point on the steady clock or "never"; sharing it out
// (share) gives a phase its part of what is left without letting it run
// past the run's end.
//
// checkTimeLimit is the one range check of a user's limit: it runs before
// any conversion to a chrono duration, whose overflow on 1e300 or NaN is
// undefined behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_DEADLINE_H
#define ONNXP_SUPPORT_DEADLINE_H

#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <optional>
#include <string>

namespace onnxp {

using SteadyClock = std::chrono::steady_clock;

/// The largest time limit accepted: about 116 days, far from the range in
/// which a steady_clock duration overflows.
constexpr double kMaxTimeLimitSeconds = 1e7;

/// A usage error unless Seconds is a finite number in (0, kMaxTimeLimitSeconds];
/// Flag names the option in the message ("--time-limit").
Error checkTimeLimit(double Seconds, const std::string &Flag);

/// How far past its limit a run may end: max(1 s, 5 %) (issue 20's guarantee,
/// not counting the writing of outputs).
double deadlineGrace(double LimitSeconds);

/// A steady-clock point Seconds from From; Seconds must satisfy
/// checkTimeLimit's range or be <= 0 (then From).
SteadyClock::time_point pointAfter(SteadyClock::time_point From, double Seconds);

/// When a run or a phase must end, or never.
class Deadline {
public:
  Deadline() = default;
  explicit Deadline(std::optional<SteadyClock::time_point> At) : At(At) {}
  static Deadline never() { return Deadline(); }
  /// Seconds (clamped into [0, kMaxTimeLimitSeconds]) from now.
  static Deadline after(double Seconds);

  bool isSet() const { return At.has_value(); }
  std::optional<SteadyClock::time_point> at() const { return At; }
  /// The deadline has passed.
  bool expired() const { return At && SteadyClock::now() >= *At; }
  /// Seconds until the deadline (0 when past); +inf when never.
  double secondsLeft() const;
  /// The earlier of this deadline and now + Seconds.
  Deadline within(double Seconds) const;
  /// now + Fraction of what is left (never stays never).
  Deadline share(double Fraction) const;

private:
  std::optional<SteadyClock::time_point> At;
};

} // namespace onnxp

#endif // ONNXP_SUPPORT_DEADLINE_H
