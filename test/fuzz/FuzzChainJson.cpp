//===- test/fuzz/FuzzChainJson.cpp - libFuzzer: chain JSON ---------------===//
#include "FuzzChainPlanners.h"

#include "onnx-partition/Import/ChainJson.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  Expected<Chain> C = parseChainJson(Text, "fuzz.json");
  if (!C) {
    fuzz::requireNotInternal(C.takeError());
    return 0;
  }
  fuzz::planChain(*C);
  return 0;
}
