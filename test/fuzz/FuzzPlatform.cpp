//===- test/fuzz/FuzzPlatform.cpp - libFuzzer: platform files ------------===//
#include "onnx-partition/IR/Platform.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  Expected<Platform> P = parsePlatform(Text, "fuzz.json");
  if (!P) {
    (void)P.takeError();
    return 0;
  }
  // What a platform promises after the range checks.
  if (P->accelerators < 0 || P->cpus < 0 || P->numDevices() == 0) __builtin_trap();
  for (int D = 0; D < P->numDevices(); ++D) (void)P->deviceName(D);
  (void)P->hostTransferMs(1e6);
  return 0;
}
