//===- Support/HumanUnits.cpp - Sizes as a person reads them --------------===//
#include "onnx-partition/Support/HumanUnits.h"

#include <cmath>
#include <cstdio>

std::string onnxp::humanBytes(double Bytes) {
  if (!std::isfinite(Bytes)) return "-";
  const char *Units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int U = 0;
  while (U < 4 && std::fabs(Bytes) >= 1024) {
    Bytes /= 1024;
    ++U;
  }
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), U == 0 ? "%.0f %s" : "%.3g %s", Bytes, Units[U]);
  return Buf;
}
