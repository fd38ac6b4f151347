//===- Transforms/WeightGradientSplit.cpp - W stages apart from B ---------===//
//
// See WeightGradientSplit.h. The W set is the largest one closed under
// in-stage readers: start from every eligible node, then drop, through a
// worklist, each node an in-stage reader outside W depends on (a node both
// need stays in B).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/WeightGradientSplit.h"

#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Transforms/PlacementFields.h"

#include <string>

using namespace onnxp;

namespace {
/// A gradient tensor as ORT's gradient builder names them: "<x>_grad", or a
/// partial "<x>_grad_<n>" (issue 25: the Sum adding them up, e.g.
/// "AccumulateGrad_/layer_norm1/Add_1_output_0_grad", has no _Grad/ scope).
bool isGradientName(const std::string &T) {
  const size_t P = T.rfind("_grad");
  if (P == std::string::npos || P == 0) return false;
  const size_t End = P + 5;
  return End == T.size() || (T[End] == '_' && End + 1 < T.size() &&
                             T.find_first_not_of("0123456789", End + 1) == std::string::npos);
}
} // namespace

bool onnxp::isBackwardWork(const onnx::NodeProto &N) {
  // The roles Analysis/TrainingGraph.cpp (assignRoles) gives: ORT's gradient
  // builder names backward nodes "<forward>_Grad/..."; its com.microsoft
  // gradient kernels are "*Grad" ops; accumulators and optimizers update
  // the parameters from their gradients.
  const std::string &Op = N.op_type();
  const bool GradOp = Op.size() > 4 && Op.compare(Op.size() - 4, 4, "Grad") == 0;
  bool GradientOutputs = N.output_size() > 0;
  for (const std::string &O : N.output()) GradientOutputs &= isGradientName(O);
  return N.name().find("_Grad/") != std::string::npos || GradOp || isOptimizerOp(N.domain(), Op) ||
         GradientOutputs;
}

std::vector<char> onnxp::weightGradientNodes(const onnx::GraphProto &G, const ModelPlacement &P) {
  const int N = G.node_size();
  const std::vector<std::vector<int>> Preds = nodeDataPredecessors(G);
  std::vector<std::vector<int>> Readers(N);
  for (int J = 0; J < N; ++J)
    for (int I : Preds[J]) Readers[I].push_back(J);
  std::vector<char> W(N, 0);
  for (int I = 0; I < N; ++I) {
    // A Transfer (always in its readers' stage) goes with its readers: into
    // W when they all are (the first stage's whole backward then is W).
    const onnx::NodeProto &Nd = G.node(I);
    const bool Transfer =
        Nd.domain() == kPartitionDomain && Nd.op_type() == "Transfer" && !Readers[I].empty();
    bool Own = Transfer || (!P.inserted[I] && isBackwardWork(Nd));
    for (int J : Readers[I]) Own &= P.stage[J] == P.stage[I]; // another stage reads it: B
    W[I] = Own;
  }
  std::vector<int> Work;
  for (int I = 0; I < N; ++I)
    if (!W[I]) Work.push_back(I);
  while (!Work.empty()) {
    const int J = Work.back();
    Work.pop_back();
    for (int I : Preds[J])
      if (W[I] && P.stage[I] == P.stage[J]) {
        W[I] = 0; // a B node of its stage reads it
        Work.push_back(I);
      }
  }
  return W;
}

int onnxp::splitWeightGradientStages(const onnx::GraphProto &G, ModelPlacement &P) {
  const std::vector<char> W = weightGradientNodes(G, P);
  const int S = P.numStages();
  std::vector<int> AllW(S, -1); // per stage: -1 no node, 1 all W, 0 some B
  std::vector<char> AnyW(S, 0);
  for (size_t I = 0; I < W.size(); ++I) {
    const int St = P.stage[I];
    AnyW[St] |= W[I];
    AllW[St] = (AllW[St] != 0) && W[I];
  }
  std::vector<int> Moved(S, -1); // per stage: the id its W nodes move to
  P.weightGradientsOf.assign(S, -1);
  int Count = 0;
  for (int St = 0; St < S; ++St) {
    if (!AnyW[St]) continue;
    ++Count;
    if (AllW[St] == 1) {
      P.weightGradientsOf[St] = St;
      continue;
    }
    Moved[St] = P.numStages();
    P.stageDevice.push_back(P.stageDevice[St]);
    if (!P.stageVirtual.empty()) P.stageVirtual.push_back(P.stageVirtual[St]);
    P.weightGradientsOf.push_back(St);
  }
  for (size_t I = 0; I < W.size(); ++I)
    if (W[I] && Moved[P.stage[I]] >= 0) P.stage[I] = Moved[P.stage[I]];
  if (!Count) P.weightGradientsOf.clear();
  return Count;
}

void onnxp::setNodeStage(onnx::NodeProto &N, int Stage) {
  if (Expected<MetadataEntries> Meta = nodeMetadataProps(N)) {
    for (auto &[K, V] : *Meta)
      if (K == kStageKey) V = std::to_string(Stage);
    setNodeMetadataProps(N, *Meta);
  }
  if (Expected<std::vector<NodeDeviceConfiguration>> C = nodeDeviceConfigurations(N)) {
    for (NodeDeviceConfiguration &D : *C)
      if (D.configurationId == kDeviceConfigurationName && D.hasPipelineStage) D.pipelineStage = Stage;
    setNodeDeviceConfigurations(N, *C);
  }
}
