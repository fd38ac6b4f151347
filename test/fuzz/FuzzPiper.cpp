//===- test/fuzz/FuzzPiper.cpp - libFuzzer: Piper planner input ----------===//
#include "FuzzChainPlanners.h"

#include "onnx-partition/Import/PiperImporter.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  (void)looksLikePiper(Text);
  // The default options and BERT-32's layer filter (the shared workload's).
  for (const char *Layer : {"", "ParallelTransformerLayer"}) {
    PiperChainOptions O;
    O.layerName = Layer;
    Expected<Chain> C = parsePiperChain(Text, "fuzz.json", O);
    if (!C) {
      fuzz::requireNotInternal(C.takeError());
      continue;
    }
    fuzz::planChain(*C);
  }
  return 0;
}
