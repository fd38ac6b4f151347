//===- Support/ChromeTrace.cpp - Chrome trace event JSON ----------------===//
//
// Written with nlohmann::json so names are escaped correctly; metadata first,
// then events by (time, pid, tid, insertion) for byte-reproducible output.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/ChromeTrace.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

using namespace onnxp;

void ChromeTrace::nameProcess(int Pid, const std::string &Name) {
  Events.push_back({'M', Pid, 0, "process_name", "", 0, 0, 0, {{"name", Name}}});
  Events.push_back({'M', Pid, 0, "process_sort_index", "", 0, 0, double(Pid), {}});
}

void ChromeTrace::nameThread(int Pid, int Tid, const std::string &Name) {
  Events.push_back({'M', Pid, Tid, "thread_name", "", 0, 0, 0, {{"name", Name}}});
  Events.push_back({'M', Pid, Tid, "thread_sort_index", "", 0, 0, double(Tid), {}});
}

void ChromeTrace::addSlice(int Pid, int Tid, const std::string &Name, const std::string &Category,
                           double StartMs, double DurationMs,
                           const std::map<std::string, std::string> &Args) {
  Events.push_back({'X', Pid, Tid, Name, Category, StartMs, DurationMs, 0, Args});
}

void ChromeTrace::addCounter(int Pid, const std::string &Name, double TimeMs, double Value) {
  Events.push_back({'C', Pid, 0, Name, "", TimeMs, 0, Value, {}});
}

std::string ChromeTrace::toJson() const {
  std::vector<size_t> Order(Events.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    const Event &X = Events[A], &Y = Events[B];
    bool MX = X.Phase == 'M', MY = Y.Phase == 'M';
    if (MX != MY) return MX;
    if (X.Ts != Y.Ts) return X.Ts < Y.Ts;
    if (X.Pid != Y.Pid) return X.Pid < Y.Pid;
    return X.Tid < Y.Tid;
  });
  nlohmann::json List = nlohmann::json::array();
  for (size_t I : Order) {
    const Event &E = Events[I];
    nlohmann::json J;
    J["ph"] = std::string(1, E.Phase);
    J["pid"] = E.Pid;
    J["tid"] = E.Tid;
    J["name"] = E.Name;
    if (E.Phase == 'M') {
      if (E.Name == "process_sort_index" || E.Name == "thread_sort_index")
        J["args"] = {{"sort_index", int(E.Value)}};
      else J["args"] = E.Args;
    } else if (E.Phase == 'X') {
      J["cat"] = E.Category.empty() ? "op" : E.Category;
      J["ts"] = E.Ts * 1000.0; // ms -> us
      J["dur"] = E.Dur * 1000.0;
      if (!E.Args.empty()) J["args"] = E.Args;
    } else {
      J["ts"] = E.Ts * 1000.0;
      J["args"] = {{E.Name, E.Value}};
    }
    List.push_back(std::move(J));
  }
  nlohmann::json Root;
  Root["traceEvents"] = std::move(List);
  Root["displayTimeUnit"] = "ms";
  return Root.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; // names may hold any byte
}
