//===- Support/SummaryText.cpp - Lines of the run summaries --------------===//
#include "onnx-partition/Support/SummaryText.h"

#include <cmath>
#include <cstdio>

std::string onnxp::humanSeconds(double Seconds) {
  if (!std::isfinite(Seconds)) return "-";
  char Buf[32];
  if (std::fabs(Seconds) >= 1 || Seconds == 0) std::snprintf(Buf, sizeof(Buf), "%.3g s", Seconds);
  else std::snprintf(Buf, sizeof(Buf), "%.3g ms", Seconds * 1e3);
  return Buf;
}

std::string onnxp::noteLine(const std::string &N) {
  static const std::string Warning = "warning: ";
  if (N.compare(0, Warning.size(), Warning) == 0) return "  " + N + "\n";
  return "  note: " + N + "\n";
}
