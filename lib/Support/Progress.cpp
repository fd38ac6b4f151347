//===- Support/Progress.cpp - One status line every few seconds -----------===//
//
// See Progress.h. The thread sleeps on a condition variable so that the
// destructor (the end of the run) wakes and joins it at once.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/Progress.h"

#include <cmath>

using namespace onnxp;

namespace {
std::string number(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.6g", V);
  return Buf;
}
} // namespace

std::string onnxp::formatStatus(const std::string &Who, const std::string &Phase, double Best, double Bound) {
  std::string S = Who + ": " + Phase;
  if (std::isfinite(Best)) S += ", best " + number(Best);
  if (std::isfinite(Bound)) S += ", bound " + number(Bound);
  if (std::isfinite(Best) && std::isfinite(Bound) && Best != 0) {
    char Buf[32];
    std::snprintf(Buf, sizeof(Buf), ", gap %.2f%%", 100.0 * std::max(0.0, Best - Bound) / std::fabs(Best));
    S += Buf;
  }
  return S;
}

ProgressTicker::ProgressTicker(std::FILE *Out, std::string Prefix, double FirstAfter, double Interval)
    : Out(Out), Prefix(std::move(Prefix)), FirstAfter(FirstAfter), Interval(Interval),
      Start(std::chrono::steady_clock::now()), Thread([this] { run(); }) {}

ProgressTicker::~ProgressTicker() {
  {
    std::lock_guard<std::mutex> G(Lock);
    Stop = true;
  }
  Wake.notify_all();
  Thread.join();
}

void ProgressTicker::report(const std::string &S) {
  std::lock_guard<std::mutex> G(Lock);
  Status = S;
}

std::function<void(const std::string &)> ProgressTicker::sink() {
  return [this](const std::string &S) { report(S); };
}

int ProgressTicker::linesPrinted() const {
  std::lock_guard<std::mutex> G(Lock);
  return Printed;
}

void ProgressTicker::run() {
  std::unique_lock<std::mutex> G(Lock);
  auto Next = Start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(FirstAfter));
  for (;;) {
    if (Wake.wait_until(G, Next, [this] { return Stop; })) return;
    double T = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
    // One write per line, so lines from other writers never split it.
    char Secs[32];
    std::snprintf(Secs, sizeof(Secs), "%.1fs ", T);
    std::string Line = Prefix + Secs + Status + "\n";
    std::fputs(Line.c_str(), Out);
    std::fflush(Out);
    ++Printed;
    Next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(Interval));
  }
}
