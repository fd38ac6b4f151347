//===- test/fuzz/FuzzOnnxModel.cpp - libFuzzer: binary ONNX and ONNX text ===//
//
// The ONNX front end end to end: load (binary or text, by content), safe
// shape inference, structure check, cost graph, training classification.
// Built twice (fuzz-onnx-binary, fuzz-onnx-text) so each has its own corpus;
// the code under test is the same because the loader detects the format.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/OnnxModel.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  Expected<OnnxModel> M = loadOnnxModel("fuzz.onnx", Text);
  if (!M) {
    (void)M.takeError();
    return 0;
  }
  M->dimBindings = {{"batch", 2}, {"N", 2}};
  if (Error E = inferShapes(*M)) return 0;
  Expected<CostGraph> G = buildCostGraph(*M);
  if (!G) {
    (void)G.takeError();
    return 0;
  }
  classifyTrainingGraph(*G, *M);
  return 0;
}
