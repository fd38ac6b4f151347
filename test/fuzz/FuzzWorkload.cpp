//===- test/fuzz/FuzzWorkload.cpp - libFuzzer: JSON workloads ------------===//
#include "onnx-partition/Import/WorkloadImporter.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  Expected<Workload> W = parseWorkload(Text, "fuzz.json");
  if (!W) {
    (void)W.takeError();
    return 0;
  }
  // Round trip: what we write must read back.
  Expected<Workload> Again = parseWorkload(writeWorkload(W->graph, W->platform), "again.json");
  if (!Again) __builtin_trap();
  return 0;
}
