//===- Transforms/PipelinePatternWriteBack.cpp - 1F1B pattern into the model ===//
//
// See PipelinePatternWriteBack.h. The pattern is the one
// Partition/pipeline/PipelineChainPlanners.cpp makes (gpuOfBlock, and
// taskStart, taskDelay per task k = 0..2L-1, task k being F_{k+1} for
// k < L and B_{2L-k} after).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/PipelinePatternWriteBack.h"

#include "onnx-partition/Transforms/PlacementFields.h"

#include <algorithm>
#include <sstream>

using namespace onnxp;

namespace {
std::string number(double V) {
  std::ostringstream OS;
  OS.precision(12);
  OS << V;
  return OS.str();
}
} // namespace

Expected<int> onnxp::writePipelinePattern(onnx::ModelProto &Out, const ModelPlacement &P, const CostGraph &G,
                                          const Chain &C, const PeriodicPattern &Pattern) {
  const int L = static_cast<int>(C.size());
  const std::vector<int> &Gpu = Pattern.gpuOfBlock;
  const std::vector<double> &Start = Pattern.taskStart;
  const std::vector<int> &Delay = Pattern.taskDelay;
  const double Period = Pattern.period;
  if ((int)Gpu.size() != L || (int)Start.size() != 2 * L || (int)Delay.size() != 2 * L)
    return makeInternalError("pipeline pattern write-back: the pattern does not fit a chain of ", L,
                             " blocks");
  onnx::GraphProto *Graph = Out.mutable_graph();
  if ((size_t)Graph->node_size() != P.numNodes() || P.inserted.size() != P.numNodes())
    return makeInternalError("pipeline pattern write-back: the placement covers ", P.numNodes(),
                             " nodes, the model has ", Graph->node_size());
  // Original node i -> its index now (insert-transfers keeps their order).
  std::vector<int> Current;
  for (size_t I = 0; I < P.numNodes(); ++I)
    if (!P.inserted[I]) Current.push_back(static_cast<int>(I));

  // Each task's position among its GPU's tasks in one period.
  std::vector<int> Order(2 * L, 0);
  for (int K = 0; K < 2 * L; ++K) {
    int GK = Gpu[K < L ? K : 2 * L - 1 - K];
    for (int J2 = 0; J2 < 2 * L; ++J2)
      if (J2 != K && Gpu[J2 < L ? J2 : 2 * L - 1 - J2] == GK &&
          (Start[J2] < Start[K] || (Start[J2] == Start[K] && J2 < K)))
        ++Order[K];
  }

  ChainOnnxNodes Nodes = chainOnnxNodes(G, C);
  int Written = 0;
  for (int B = 0; B < L; ++B)
    for (int Fwd = 0; Fwd < 2; ++Fwd) {
      int K = Fwd ? B : 2 * L - 1 - B;
      for (int Orig : Fwd ? Nodes.forward[B] : Nodes.backward[B]) {
        if (Orig < 0 || Orig >= (int)Current.size())
          return makeInternalError("pipeline pattern write-back: block ", B + 1, " names node ", Orig);
        onnx::NodeProto &N = *Graph->mutable_node(Current[Orig]);
        MetadataEntries Meta;
        if (Expected<MetadataEntries> Old = nodeMetadataProps(N)) {
          for (const auto &[Key, V] : *Old)
            if (Key.rfind("onnx_partition.pipeline_", 0) != 0) Meta.emplace_back(Key, V);
        } else {
          return Old.takeError();
        }
        Meta.emplace_back(kPipelineTaskKey, (Fwd ? "F" : "B") + std::to_string(B + 1));
        Meta.emplace_back(kPipelineStartKey, number(Start[K]));
        Meta.emplace_back(kPipelineShiftKey, std::to_string(Delay[K]));
        Meta.emplace_back(kPipelineOrderKey, std::to_string(Order[K]));
        setNodeMetadataProps(N, Meta);
        ++Written;
      }
    }
  setModelMetadataValue(Out, kPipelinePeriodKey, number(Period));
  return Written;
}
