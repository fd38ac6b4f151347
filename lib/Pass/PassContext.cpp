//===- Pass/PassContext.cpp - Counters for --stats ----------------------===//
#include "onnx-partition/Pass/PassContext.h"

using namespace onnxp;

void PassContext::count(const std::string &Pass, const std::string &Description, double Value) {
  for (Statistic &S : stats)
    if (S.pass == Pass && S.description == Description) {
      S.value += Value;
      return;
    }
  stats.push_back({Pass, Description, Value});
}

double PassContext::counter(const std::string &Pass, const std::string &Description) const {
  for (const Statistic &S : stats)
    if (S.pass == Pass && S.description == Description) return S.value;
  return 0;
}
