//===- Support/Deadline.cpp - When a run must end -------------------------===//
//
// See Deadline.h. Every conversion from seconds to a steady_clock duration
// goes through pointAfter, which clamps first: a double outside the
// duration's range is undefined behaviour in duration_cast.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/Deadline.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace onnxp;

Error onnxp::checkTimeLimit(double Seconds, const std::string &Flag) {
  if (std::isnan(Seconds) || std::isinf(Seconds) || !(Seconds > 0) || Seconds > kMaxTimeLimitSeconds)
    return makeUsageError(Flag, " must be a number of seconds in (0, ", kMaxTimeLimitSeconds, "], not ",
                          Seconds);
  return Error::success();
}

double onnxp::deadlineGrace(double LimitSeconds) {
  if (!std::isfinite(LimitSeconds)) return 1.0;
  return std::max(1.0, 0.05 * LimitSeconds);
}

SteadyClock::time_point onnxp::pointAfter(SteadyClock::time_point From, double Seconds) {
  if (!(Seconds > 0)) return From; // also NaN
  Seconds = std::min(Seconds, kMaxTimeLimitSeconds);
  return From + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(Seconds));
}

Deadline Deadline::after(double Seconds) {
  Deadline D(pointAfter(SteadyClock::now(), Seconds));
  D.Limit = Seconds;
  return D;
}

Deadline Deadline::forRun(SteadyClock::time_point Start, double Seconds, bool Given) {
  Deadline D(pointAfter(Start, Seconds));
  D.Limit = Seconds;
  D.Given = Given;
  return D;
}

double Deadline::secondsLeft() const {
  if (!At) return std::numeric_limits<double>::infinity();
  return std::max(0.0, std::chrono::duration<double>(*At - SteadyClock::now()).count());
}

Deadline Deadline::within(double Seconds) const {
  if (!At) return after(Seconds);
  SteadyClock::time_point Mine = pointAfter(SteadyClock::now(), Seconds);
  if (At && *At < Mine) return *this;
  Deadline D = *this;
  D.At = Mine;
  return D;
}

Deadline Deadline::share(double Fraction) const {
  if (!At) return *this;
  Deadline D = *this;
  // Never past this deadline, whatever the clock read between the two calls.
  D.At = std::min(*At, pointAfter(SteadyClock::now(), std::clamp(Fraction, 0.0, 1.0) * secondsLeft()));
  return D;
}

Deadline Deadline::endingAt(SteadyClock::time_point End) const {
  if (!At) return *this;
  Deadline D = *this;
  D.At = End;
  return D;
}
