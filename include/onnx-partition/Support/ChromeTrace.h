//===- Support/ChromeTrace.h - Schedules as Chrome trace events -*- C++ -*-===//
//
// Every simulator of the project (1F1B/GPipe pipelines, weight offloading,
// activation offloading) writes what it replayed in the Chrome trace event
// format, which Perfetto (ui.perfetto.dev) and chrome://tracing open: one
// process per device (GPU, host link, ...), one thread per lane (compute,
// link out, link in), complete events ("X") for operations and counter
// events ("C") for memory. Timestamps are microseconds in the format; the
// API takes milliseconds, the unit of every cost in the project.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_CHROMETRACE_H
#define ONNXP_SUPPORT_CHROMETRACE_H

#include <map>
#include <string>
#include <vector>

namespace onnxp {

class ChromeTrace {
public:
  /// Names a process (a device) and one of its threads (a lane); lanes are
  /// shown in the order they are named.
  void nameProcess(int Pid, const std::string &Name);
  void nameThread(int Pid, int Tid, const std::string &Name);

  /// An operation of Duration ms starting at Start ms on lane (Pid, Tid).
  /// Args are shown when the event is selected (bytes, layer, period, ...).
  void addSlice(int Pid, int Tid, const std::string &Name, const std::string &Category, double StartMs,
                double DurationMs, const std::map<std::string, std::string> &Args = {});

  /// A counter sample (e.g. "memory" in bytes) of process Pid at time ms;
  /// the value holds until the next sample of the same counter.
  void addCounter(int Pid, const std::string &Name, double TimeMs, double Value);

  /// The whole trace as JSON ({"traceEvents": [...], "displayTimeUnit": "ms"}).
  /// Events are sorted by time, so equal inputs give equal bytes.
  std::string toJson() const;

  size_t numEvents() const { return Events.size(); }

private:
  struct Event {
    char Phase; // 'X' slice, 'C' counter, 'M' metadata
    int Pid, Tid;
    std::string Name, Category;
    double Ts, Dur, Value;
    std::map<std::string, std::string> Args;
  };
  std::vector<Event> Events;
};

} // namespace onnxp

#endif // ONNXP_SUPPORT_CHROMETRACE_H
