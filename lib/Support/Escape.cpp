//===- Support/Escape.cpp - Strings into markup --------------------------===//
#include "onnx-partition/Support/Escape.h"

#include <cstdint>

using namespace onnxp;

namespace {
const char *const Replacement = "\xEF\xBF\xBD"; // U+FFFD

/// Length of the valid UTF-8 sequence at S[I], or 0 (RFC 3629: no
/// overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8Length(const std::string &S, size_t I) {
  auto B = [&](size_t K) { return static_cast<uint8_t>(S[K]); };
  uint8_t C = B(I);
  if (C < 0x80) return 1;
  size_t N = C >= 0xF0 ? 4 : C >= 0xE0 ? 3 : C >= 0xC2 ? 2 : 0;
  if (N == 0 || C > 0xF4 || I + N > S.size()) return 0;
  for (size_t K = 1; K < N; ++K)
    if ((B(I + K) & 0xC0) != 0x80) return 0;
  if (C == 0xE0 && B(I + 1) < 0xA0) return 0;  // overlong
  if (C == 0xED && B(I + 1) >= 0xA0) return 0; // surrogate
  if (C == 0xF0 && B(I + 1) < 0x90) return 0;  // overlong
  if (C == 0xF4 && B(I + 1) >= 0x90) return 0; // above U+10FFFF
  return N;
}
} // namespace

std::string onnxp::validUtf8(const std::string &S) {
  std::string Out;
  Out.reserve(S.size());
  for (size_t I = 0; I < S.size();) {
    size_t N = utf8Length(S, I);
    if (N == 0) {
      Out += Replacement;
      ++I;
    } else {
      Out.append(S, I, N);
      I += N;
    }
  }
  return Out;
}

std::string onnxp::xmlEscape(const std::string &S) {
  std::string Out;
  Out.reserve(S.size() + 16);
  for (size_t I = 0; I < S.size();) {
    size_t N = utf8Length(S, I);
    if (N == 0) {
      Out += Replacement;
      ++I;
      continue;
    }
    if (N > 1) {
      Out.append(S, I, N);
      I += N;
      continue;
    }
    char C = S[I++];
    switch (C) {
    case '&': Out += "&amp;"; break;
    case '<': Out += "&lt;"; break;
    case '>': Out += "&gt;"; break;
    case '"': Out += "&quot;"; break;
    case '\'': Out += "&apos;"; break;
    default:
      if (static_cast<uint8_t>(C) < 0x20 && C != '\t' && C != '\n' && C != '\r') Out += Replacement;
      else Out += C;
    }
  }
  return Out;
}
