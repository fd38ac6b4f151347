//===- test/fuzz/FuzzOrtProfile.cpp - libFuzzer: ONNX Runtime profiles ---===//
#include "onnx-partition/Cost/OrtProfile.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  Expected<OrtProfile> P = parseOrtProfile(Text, "fuzz.json");
  if (!P) (void)P.takeError();
  return 0;
}
