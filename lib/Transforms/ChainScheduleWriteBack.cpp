//===- Transforms/ChainScheduleWriteBack.cpp - Chain plans into the model ---===//
//
// The ONNX graph runs one iteration in graph order F_1..F_L, loss,
// B_L..B_1 (optimizer nodes count with B_k: seed 002 updates w_k inside
// B_k); seed 002's cycle B_L..B_1, F_1..F_L is the same iteration seen from
// another starting point. A weight transfer is written where it happens in
// that order: an Offload right after the last node of the op that sends it,
// a Prefetch right before the first node of the op that needs it. A
// prefetch reads the host copy when an Offload earlier in the graph made
// one, else the weight itself (the copy the previous iteration offloaded);
// every later reader of the weight reads the prefetched tensor. Drops
// without a transfer (the discount, seed 002 §3) move no data and write no
// node. A layer's weights are the parameters its nodes own (first reader),
// as the cost graph counts them in W_l. Transfers for an op with no ONNX
// node (backward derived by --training) are counted, not written.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/ChainScheduleWriteBack.h"

#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/PipelinePatternWriteBack.h"
#include "onnx-partition/Transforms/PlacementFields.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

ChainOnnxNodes onnxp::chainOnnxNodes(const CostGraph &G, const Chain &C) {
  ChainOnnxNodes R;
  R.forward.resize(C.size());
  R.backward.resize(C.size());
  for (size_t B = 0; B < C.size(); ++B) {
    for (int V : C.blocks[B].nodes) {
      const CostNode &N = G.node(V);
      // The loss stays outside the layers: rewriteActivationSchedule treats
      // it as the forward reader of a^L, and seed 002 has no loss op.
      if (N.role == Role::Loss) continue;
      auto &Into = N.role == Role::Forward ? R.forward[B] : R.backward[B];
      Into.insert(Into.end(), N.onnxNodes.begin(), N.onnxNodes.end());
    }
    std::sort(R.forward[B].begin(), R.forward[B].end());
    std::sort(R.backward[B].begin(), R.backward[B].end());
  }
  return R;
}

namespace {

onnx::AttributeProto stringAttribute(const std::string &Name, const std::string &Value) {
  onnx::AttributeProto A;
  A.set_name(Name);
  A.set_type(onnx::AttributeProto::STRING);
  A.set_s(Value);
  return A;
}
onnx::AttributeProto intAttribute(const std::string &Name, int64_t Value) {
  onnx::AttributeProto A;
  A.set_name(Name);
  A.set_type(onnx::AttributeProto::INT);
  A.set_i(Value);
  return A;
}

Error singleDevice(const ModelPlacement &P) {
  for (size_t I = 0; I < P.numNodes(); ++I)
    if (P.device[I] != P.device.front() || P.stage[I] != P.stage.front())
      return makeError(
          "chain schedule write-back: the plan spreads the model over several devices or stages; "
          "offloading and recomputation are written for one accelerator");
  return Error::success();
}

/// One weight transfer at a point of graph order.
struct WeightEvent {
  double position = 0; ///< original node index +- 0.5
  bool prefetch = false;
  int layer = 0;
  int anchor = 0; ///< the original node it goes after (offload) or before (prefetch)
};

/// The weights of each layer 1..L: parameters whose first reader is in the
/// layer's forward or backward block.
std::vector<std::vector<std::string>> layerWeights(const onnx::GraphProto &G, const OnnxModel &M,
                                                   const ChainOnnxNodes &Nodes, int L) {
  const int N = G.node_size();
  std::set<std::string> Params;
  for (const ParameterInfo &Pr : findParameters(M)) Params.insert(Pr.name);
  std::vector<int> LayerOfNode(N, 0);
  for (int K = 1; K <= L; ++K) {
    for (int Idx : Nodes.forward[K - 1]) LayerOfNode[Idx] = K;
    for (int Idx : Nodes.backward[K - 1]) LayerOfNode[Idx] = K;
  }
  std::vector<std::vector<std::string>> Weights(L + 1);
  std::set<std::string> Owned;
  for (int Idx = 0; Idx < N; ++Idx)
    for (const std::string &In : G.node(Idx).input())
      if (Params.count(In) && Owned.insert(In).second && LayerOfNode[Idx])
        Weights[LayerOfNode[Idx]].push_back(In);
  return Weights;
}

/// Writes the Offload and Prefetch nodes of a weight schedule into the
/// model, one event at a time in graph order.
class WeightWriter {
public:
  WeightWriter(onnx::ModelProto &Out, ModelPlacement &P, const OnnxModel &M) : Out(Out), P(P), M(M) {
    const onnx::GraphProto &G = Out.graph();
    Index.resize(G.node_size());
    for (int I = 0; I < G.node_size(); ++I) Index[I] = I;
    for (const auto &Nd : G.node())
      for (const auto &O : Nd.output()) Names.insert(O);
    for (const auto &I : G.input()) Names.insert(I.name());
    for (const auto &I : G.initializer()) Names.insert(I.name());
    Acc = P.deviceNames[P.device.empty() ? 0 : P.device.front()];
    Stage = P.stage.empty() ? 0 : P.stage.front();
  }

  /// Offloads or prefetches weight W at event E.
  Error write(const WeightEvent &E, const std::string &W, ChainWriteBackResult &R);

private:
  onnx::ModelProto &Out;
  ModelPlacement &P;
  const OnnxModel &M;
  std::vector<int> Index; ///< original node -> current index
  std::map<std::string, std::string> Current, HostCopy;
  std::set<std::string> Names;
  std::string Acc;
  int Stage = 0;

  std::string fresh(const std::string &Base) {
    std::string Name = Base;
    for (int I = 1; Names.count(Name); ++I) Name = Base + "_" + std::to_string(I);
    Names.insert(Name);
    return Name;
  }
  /// Inserted node at Pos: original nodes at or after it move down one.
  void shiftFrom(int Pos) {
    for (int &I : Index)
      if (I >= Pos) ++I;
  }
};

Error WeightWriter::write(const WeightEvent &E, const std::string &W, ChainWriteBackResult &R) {
  const onnx::GraphProto &G = Out.graph();
  const TensorInfo *TI = M.tensor(W);
  std::optional<double> Known = TI ? TI->bytes() : std::nullopt;
  const double Bytes = Known ? *Known : 0.0;
  std::string Cur = Current.count(W) ? Current[W] : W;
  const onnx::NodeProto &AN = G.node(Index[E.anchor]);
  const std::string Anchor = AN.name().empty() ? AN.op_type() + "_" + std::to_string(E.anchor) : AN.name();
  std::vector<onnx::AttributeProto> Attrs = {
      stringAttribute("source", E.prefetch ? "host" : Acc),
      stringAttribute("target", E.prefetch ? Acc : "host"),
      intAttribute("bytes", int64_t(Bytes)),
      intAttribute("stage", Stage),
      stringAttribute("after_node", Anchor),
      stringAttribute("stream", E.prefetch ? "host->gpu" : "gpu->host")};
  if (!E.prefetch) {
    std::string Host = fresh(W + "__host");
    Expected<int> Pos = insertPartitionNode(Out, P, PartitionOp::Offload, Cur, Host, Attrs, Index[E.anchor],
                                            {}, P.device.front(), Stage);
    if (!Pos) return Pos.takeError();
    shiftFrom(*Pos);
    HostCopy[W] = Host;
    ++R.offloadNodes;
    R.offloadedBytes += Bytes;
    return Error::success();
  }
  std::string Source = HostCopy.count(W) ? HostCopy[W] : Cur;
  std::string Back = fresh(W + "__prefetch");
  int Before = Index[E.anchor];
  Expected<int> Pos = insertPartitionNode(Out, P, PartitionOp::Prefetch, Source, Back, Attrs, Before - 1, {},
                                          P.device.front(), Stage);
  if (!Pos) return Pos.takeError();
  shiftFrom(*Pos);
  // Every later reader of the weight's current name reads the prefetched copy.
  onnx::GraphProto *MG = Out.mutable_graph();
  for (int I = *Pos + 1; I < MG->node_size(); ++I)
    for (auto &In : *MG->mutable_node(I)->mutable_input())
      if (In == Cur) In = Back;
  Current[W] = Back;
  HostCopy.erase(W);
  ++R.prefetchNodes;
  R.prefetchedBytes += Bytes;
  return Error::success();
}

Expected<ChainWriteBackResult> writeWeightOffloads(onnx::ModelProto &Out, ModelPlacement &P,
                                                   const OnnxModel &M, const Chain &C,
                                                   const ChainOnnxNodes &Nodes,
                                                   const WeightOffloadSchedule &Schedule) {
  int L = int(C.size());
  ONNXP_RETURN_IF_ERROR(checkWeightOffloadLayers(Schedule, L));
  const OffloadSchedule *S = &Schedule.replay;
  const onnx::GraphProto &G = Out.graph();
  int N = G.node_size();
  // Op j of seed 002 (j < L: B_{L-j}, else F_{j-L+1}) -> its ONNX nodes.
  auto OpNodes = [&](int J) -> const std::vector<int> & {
    return J < L ? Nodes.backward[L - J - 1] : Nodes.forward[J - L];
  };
  for (int J = 0; J < 2 * L; ++J)
    for (int Idx : OpNodes(J))
      if (Idx < 0 || Idx >= N)
        return makeInternalError("chain block names ONNX node ", Idx, ", not in the graph");
  std::vector<std::vector<std::string>> Weights = layerWeights(G, M, Nodes, L);

  std::vector<WeightEvent> Events;
  int Skipped = 0;
  for (const OffloadTransfer &T : S->transfers) {
    if (T.layer < 1 || T.layer > L || T.forOp < 0 || T.forOp >= 2 * L)
      return makeError("offload schedule: transfer of layer ", T.layer, " for op ", T.forOp,
                       " is outside the chain");
    // An op without ONNX nodes (backward nodes derived by --training exist
    // in the cost graph only) has no point in the model to write at.
    const std::vector<int> &Any = OpNodes(T.forOp);
    if (Any.empty()) {
      ++Skipped;
      continue;
    }
    WeightEvent E;
    E.layer = T.layer;
    E.prefetch = T.kind == TransferKind::Prefetch;
    E.anchor = E.prefetch ? Any.front() : Any.back();
    E.position = E.anchor + (E.prefetch ? -0.5 : 0.5);
    Events.push_back(E);
  }
  std::stable_sort(Events.begin(), Events.end(),
                   [](const WeightEvent &A, const WeightEvent &B) { return A.position < B.position; });

  ChainWriteBackResult R;
  R.kind = ChainWriteBackResult::Kind::WeightOffload;
  R.skippedTransfers = Skipped;
  WeightWriter Writer(Out, P, M);
  for (const WeightEvent &E : Events)
    for (const std::string &W : Weights[E.layer]) ONNXP_RETURN_IF_ERROR(Writer.write(E, W, R));
  return R;
}

Expected<ChainWriteBackResult> writeActivationSchedule(onnx::ModelProto &Out, ModelPlacement &P,
                                                       const Chain &C, const ChainOnnxNodes &Nodes,
                                                       const ActivationSchedule &S) {
  RematPlan Plan = S.rematPlan();
  Plan.layers.resize(C.size());
  Expected<RecomputeRewriteResult> RR = rewriteActivationSchedule(Out, Nodes.forward, Plan);
  if (!RR) return RR.takeError();
  // The rewrite reorders nodes and adds copies: every node stays on the
  // one accelerator; the copies and transfers are marked as inserted.
  int Device = P.device.empty() ? 0 : P.device.front(), Stage = P.stage.empty() ? 0 : P.stage.front();
  const onnx::GraphProto &G = Out.graph();
  P.device.assign(G.node_size(), Device);
  P.stage.assign(G.node_size(), Stage);
  P.inserted.assign(G.node_size(), 0);
  for (int I = 0; I < G.node_size(); ++I)
    P.inserted[I] = G.node(I).domain() == kPartitionDomain ||
                    G.node(I).name().find(kRecomputeNameTag) != std::string::npos;
  ChainWriteBackResult R;
  R.kind = ChainWriteBackResult::Kind::Activation;
  R.offloadNodes = RR->offloadNodes;
  R.prefetchNodes = RR->prefetchNodes;
  R.activation = std::move(*RR);
  return R;
}

} // namespace

Expected<ChainWriteBackResult> onnxp::writeChainSchedule(onnx::ModelProto &Out, ModelPlacement &P,
                                                         const OnnxModel &M, const CostGraph &G,
                                                         const Chain &C, const ChainSchedule &Schedule) {
  ChainWriteBackResult None;
  if (const auto *Pattern = std::get_if<PeriodicPattern>(&Schedule)) {
    // Multi-GPU 1F1B patterns: each node's place in the period, no rewrite.
    for (const ChainBlock &B : C.blocks)
      if (B.nodes.empty()) return None;
    Expected<int> Written = writePipelinePattern(Out, P, G, C, *Pattern);
    if (!Written) return Written.takeError();
    return None;
  }
  const auto *Activation = std::get_if<ActivationSchedule>(&Schedule);
  const auto *Weights = std::get_if<WeightOffloadSchedule>(&Schedule);
  // No schedule, or PipeDream's replicated stages: nothing to write.
  if (!Activation && !Weights) return None;
  if (Out.graph().node_size() != int(P.numNodes()))
    return makeInternalError("chain schedule write-back: the placement covers ", P.numNodes(),
                             " nodes, the model has ", Out.graph().node_size());
  for (const ChainBlock &B : C.blocks)
    if (B.nodes.empty())
      return makeError("chain schedule write-back: chain block '", B.name,
                       "' names no graph nodes (a chain read from a file cannot be written into a model)");
  ONNXP_RETURN_IF_ERROR(singleDevice(P));
  ChainOnnxNodes Nodes = chainOnnxNodes(G, C);
  if (Weights) return writeWeightOffloads(Out, P, M, C, Nodes, *Weights);
  return writeActivationSchedule(Out, P, C, Nodes, *Activation);
}
