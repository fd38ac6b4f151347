//===- unit/Pipeline/PipelineTestUtil.cpp - Chains for the pipeline tests -===//
//
// See PipelineTestUtil.h.
//
//===----------------------------------------------------------------------===//
#include "PipelineTestUtil.h"

#include "onnx-partition/Import/PipeDreamProfile.h"
#include "onnx-partition/Support/FileIO.h"

#include <algorithm>

using namespace onnxp;

std::optional<Chain> onnxp::test::vgg16Chain() {
  Expected<std::string> Text = readFile(std::string(ONNXP_SHARED_DIR) + "/workloads/pipedream/vgg16.txt");
  if (!Text) return std::nullopt;
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(*Text, "vgg16.txt");
  if (!P) return std::nullopt;
  Expected<Chain> C = chainFromSeparators(*P);
  if (!C) return std::nullopt;
  return *C;
}

Chain onnxp::test::mergeAt(const Chain &C, const std::vector<std::string> &Ends) {
  Chain R;
  R.name = C.name + "-merged";
  R.inputBytes = C.inputBytes;
  ChainBlock Cur;
  for (const ChainBlock &B : C.blocks) {
    Cur.forwardTime += B.forwardTime;
    Cur.backwardTime += B.backwardTime;
    Cur.weightBytes += B.weightBytes;
    if (std::find(Ends.begin(), Ends.end(), B.name) == Ends.end()) continue;
    Cur.name = B.name;
    Cur.outputBytes = Cur.storedBytes = B.outputBytes;
    R.blocks.push_back(Cur);
    Cur = ChainBlock();
  }
  return R;
}
