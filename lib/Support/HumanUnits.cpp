//===- Support/HumanUnits.cpp - Sizes as a person reads them --------------===//
#include "onnx-partition/Support/HumanUnits.h"

#include <cmath>
#include <cstdio>
#include <string>

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

std::string onnxp::exactBytes(double Bytes) {
  if (!std::isfinite(Bytes)) return Bytes > 0 ? "unlimited bytes" : "- bytes";
  // Thousandths of a byte, rounded once, so 0.9996 becomes 1 and not "0.1000".
  double Milli = std::round(std::fabs(Bytes) * 1000);
  double Whole = std::floor(Milli / 1000);
  long Frac = std::lround(Milli - Whole * 1000);
  char Buf[64];
  // Beyond 2^53 a double has no fraction and %.0f prints every digit.
  std::snprintf(Buf, sizeof(Buf), "%.0f", Whole);
  std::string Digits = Buf, Out = Bytes < 0 && Milli > 0 ? "-" : "";
  for (size_t I = 0; I < Digits.size(); ++I) {
    if (I > 0 && (Digits.size() - I) % 3 == 0) Out += ',';
    Out += Digits[I];
  }
  if (Frac > 0) {
    std::snprintf(Buf, sizeof(Buf), ".%03ld", Frac);
    std::string F = Buf;
    while (F.back() == '0') F.pop_back();
    Out += F;
  }
  return Out + (Out == "1" ? " byte" : " bytes");
}

std::string onnxp::wholeBytes(double Bytes) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.0f", std::ceil(Bytes));
  return Buf;
}
