//===- test/fuzz/FuzzCostTable.cpp - libFuzzer: cost tables (JSON, CSV) --===//
#include "onnx-partition/Cost/CostTable.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  Expected<CostTable> T = parseCostTable(Text, "fuzz.csv");
  if (!T) (void)T.takeError();
  return 0;
}
