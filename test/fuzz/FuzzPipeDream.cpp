//===- test/fuzz/FuzzPipeDream.cpp - libFuzzer: PipeDream profiles -------===//
#include "FuzzChainPlanners.h"

#include "onnx-partition/Import/PipeDreamProfile.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  (void)looksLikePipeDreamProfile(Text);
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(Text, "fuzz.txt");
  if (!P) {
    fuzz::requireNotInternal(P.takeError());
    return 0;
  }
  // Both recipes; each chain through the planners.
  for (bool Layers : {false, true}) {
    Expected<Chain> C = Layers ? chainFromLayers(*P) : chainFromSeparators(*P);
    if (!C) {
      fuzz::requireNotInternal(C.takeError());
      continue;
    }
    fuzz::planChain(*C);
  }
  return 0;
}
