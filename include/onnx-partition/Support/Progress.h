//===- Support/Progress.h - One status line every few seconds ---*- C++ -*-===//
//
// Long runs say what they do (issue 20, item 2), in the manner of CBC's and
// HiGHS's logs but one line each: "onnx-partition: 12.0s ip: cbc search,
// best 1.234, bound 1.1, gap 10.1%". Algorithms report their state through
// PartitionOptions::progress as often as they like (it costs a lock and a
// string copy); a ProgressTicker keeps the latest report and prints it from
// its own thread, first after FirstAfter seconds and then every Interval
// seconds, so a phase that reports nothing for a minute (a solver's root LP,
// a DP) still shows that the run is alive. Nothing goes to stdout.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_PROGRESS_H
#define ONNXP_SUPPORT_PROGRESS_H

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace onnxp {

/// "<Who>: <Phase>[, best B][, bound L][, gap G%]" with NaN/inf parts left
/// out: the text an algorithm hands to PartitionOptions::progress.
std::string formatStatus(const std::string &Who, const std::string &Phase, double Best, double Bound);

class ProgressTicker {
public:
  /// Prints to Out (stderr in the tool), each line prefixed with Prefix and
  /// the seconds since construction.
  ProgressTicker(std::FILE *Out, std::string Prefix, double FirstAfter = 2.0, double Interval = 5.0);
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker &) = delete;
  ProgressTicker &operator=(const ProgressTicker &) = delete;

  /// The latest status (thread-safe).
  void report(const std::string &Status);
  /// A callback that forwards to report(); valid while the ticker lives.
  std::function<void(const std::string &)> sink();
  /// Lines printed so far.
  int linesPrinted() const;

private:
  void run();

  std::FILE *Out;
  std::string Prefix;
  double FirstAfter, Interval;
  std::chrono::steady_clock::time_point Start;
  mutable std::mutex Lock;
  std::condition_variable Wake;
  std::string Status = "working";
  bool Stop = false;
  int Printed = 0;
  std::thread Thread;
};

} // namespace onnxp

#endif // ONNXP_SUPPORT_PROGRESS_H
