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
#include <limits>
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

/// The limit a run gets when the user gives none (--time-limit's default).
constexpr double kDefaultTimeLimitSeconds = 600;

/// When a run or a phase must end, or never: the one representation of
/// time below the option parser (issue 32, item 2). Every "time left" is
/// secondsLeft, share or within; a Deadline that is never set has +inf
/// seconds left everywhere (nothing in the library invents a limit of its
/// own). A deadline also carries the limit it was made from (limitSeconds)
/// and whether the user gave it (limitGiven), for the notes that name the
/// limit and the choices that depend on the user asking for one (auto
/// includes the IPs); the parts share and within cut from it keep both.
class Deadline {
public:
  /// Never.
  Deadline() = default;
  /// At At (tests, and deadlines already on the clock); the limit is unknown
  /// (limitSeconds +inf) and counts as given.
  explicit Deadline(SteadyClock::time_point At) : At(At), Given(true) {}
  static Deadline never() { return Deadline(); }
  /// Seconds (clamped into [0, kMaxTimeLimitSeconds]) from now, a limit of
  /// Seconds asked for by the caller (limitGiven).
  static Deadline after(double Seconds);
  /// A run's deadline: Start + Seconds, where Seconds passed checkTimeLimit;
  /// Given: the user asked for Seconds (else it is the default limit).
  static Deadline forRun(SteadyClock::time_point Start, double Seconds, bool Given);

  bool isSet() const { return At.has_value(); }
  std::optional<SteadyClock::time_point> at() const { return At; }
  /// The deadline has passed.
  bool expired() const { return At && SteadyClock::now() >= *At; }
  /// Seconds until the deadline (0 when past); +inf when never.
  double secondsLeft() const;
  /// The earlier of this deadline and now + Seconds (never: after(Seconds)).
  Deadline within(double Seconds) const;
  /// now + Fraction of what is left (never stays never).
  Deadline share(double Fraction) const;
  /// This run's limit, ending at End instead (a part of the run that starts
  /// with it, e.g. --memory-sweep's plan); never stays never.
  Deadline endingAt(SteadyClock::time_point End) const;

  /// The limit in seconds this deadline was made from (the user's
  /// --time-limit, or the default); +inf when never or unknown.
  double limitSeconds() const { return Limit; }
  /// The limit was asked for (--time-limit, or a program's after()), not
  /// the default one.
  bool limitGiven() const { return Given; }
  /// The run ends at the default limit, which the user did not choose: the
  /// searching planners then say so in a note.
  bool isDefaultLimit() const { return At && !Given; }

private:
  std::optional<SteadyClock::time_point> At;
  double Limit = std::numeric_limits<double>::infinity();
  bool Given = false;
};

} // namespace onnxp

#endif // ONNXP_SUPPORT_DEADLINE_H
