//===- Partition/piper/MegatronLayers.cpp - Layers and their TP splits ---===//
//
// See MegatronLayers.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/piper/MegatronLayers.h"

#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

namespace {
constexpr size_t kMaxMergedBlocks = 8;

/// A weight MatMul: the node and the activation it reads.
struct WeightMatMul {
  int node = -1;
  std::string input; ///< the activation tensor
  int64_t in = -1;   ///< K: the width it reads (-1: unknown)
  int64_t out = -1;  ///< N: the width it writes
};

const TensorInfo *outputInfo(const CostGraph &G, const OnnxModel &M, int V) {
  const CostNode &N = G.node(V);
  if (N.onnxNodes.empty()) return nullptr;
  const onnx::NodeProto &P = M.graph().node(N.onnxNodes.front());
  return P.output_size() ? M.tensor(P.output(0)) : nullptr;
}

int64_t lastDim(const TensorInfo *T) { return T && T->hasShape && !T->dims.empty() ? T->dims.back() : -1; }

/// The weight MatMul reading one activation and a weight, or nothing.
std::optional<WeightMatMul> weightMatMul(const CostGraph &G, const OnnxModel &M,
                                         const std::vector<char> &DataFree,
                                         const std::set<std::string> &Weights, int V) {
  const CostNode &N = G.node(V);
  if ((N.op != "MatMul" && N.op != "Gemm") || DataFree[V] || N.onnxNodes.empty()) return std::nullopt;
  const onnx::NodeProto &P = M.graph().node(N.onnxNodes.front());
  if (P.input_size() < 2) return std::nullopt;
  // A tensor is weight-side when it is a weight or a data-free node's
  // output; the activation is the other input (a graph input included).
  std::map<std::string, int> Producer;
  for (int E : G.inEdges(V)) Producer[G.edge(E).tensor] = G.edge(E).src;
  auto WeightSide = [&](const std::string &T) {
    auto It = Producer.find(T);
    return Weights.count(T) > 0 || (It != Producer.end() && DataFree[It->second]);
  };
  const bool W0 = WeightSide(P.input(0)), W1 = WeightSide(P.input(1));
  if (W0 == W1) return std::nullopt;
  WeightMatMul W{V, W1 ? P.input(0) : P.input(1)};
  // K and N from the weight's 2-D shape (Gemm's transB swaps them), else
  // from the activations' last dims.
  const std::string &WeightName = P.input(0) == W.input ? P.input(1) : P.input(0);
  const TensorInfo *Wt = M.tensor(WeightName);
  if (Wt && Wt->hasShape && Wt->dims.size() == 2 && P.input(1) == WeightName) {
    bool TransB = false;
    for (const auto &A : P.attribute()) TransB |= A.name() == "transB" && A.i() != 0;
    W.in = Wt->dims[TransB ? 1 : 0];
    W.out = Wt->dims[TransB ? 0 : 1];
  }
  if (W.in <= 0) W.in = lastDim(M.tensor(W.input));
  if (W.out <= 0) W.out = lastDim(outputInfo(G, M, V));
  return W;
}

/// Forward nodes of the layer reachable from Starts (Down) or reaching
/// them (up), through edges inside the layer.
std::set<int> reach(const CostGraph &G, const std::set<int> &Inside, const std::vector<int> &Starts,
                    bool Down) {
  std::set<int> Seen(Starts.begin(), Starts.end());
  std::vector<int> Work = Starts;
  while (!Work.empty()) {
    const int V = Work.back();
    Work.pop_back();
    for (int E : Down ? G.outEdges(V) : G.inEdges(V)) {
      const int W = Down ? G.edge(E).dst : G.edge(E).src;
      if (Inside.count(W) && Seen.insert(W).second) Work.push_back(W);
    }
  }
  return Seen;
}

/// Megatron blocks among the layer's forward nodes (in topological order).
std::vector<MegatronBlock> findBlocks(const CostGraph &G, const OnnxModel &M,
                                      const std::vector<char> &DataFree, const std::set<std::string> &Weights,
                                      const std::vector<int> &Forward, bool &Open) {
  std::vector<WeightMatMul> Mm;
  for (int V : Forward)
    if (std::optional<WeightMatMul> W = weightMatMul(G, M, DataFree, Weights, V)) Mm.push_back(*W);
  const std::set<int> Inside(Forward.begin(), Forward.end());
  std::vector<MegatronBlock> Blocks;
  Open = false;
  size_t I = 0;
  while (I < Mm.size()) {
    // The column group: every weight MatMul reading Mm[I]'s activation.
    MegatronBlock B;
    std::vector<size_t> Members;
    for (size_t J = I; J < Mm.size(); ++J)
      if (Mm[J].input == Mm[I].input) Members.push_back(J);
    for (size_t J : Members) B.column.push_back(Mm[J].node);
    const std::set<int> Down = reach(G, Inside, B.column, true);
    size_t Row = Mm.size();
    for (size_t J = I + 1; J < Mm.size() && Row == Mm.size(); ++J)
      if (std::find(Members.begin(), Members.end(), J) == Members.end() && Down.count(Mm[J].node) &&
          Mm[J].out == Mm[I].in && Mm[I].in > 0)
        Row = J;
    if (Row == Mm.size()) {
      Open = true; // a column group without its row projection (yet)
      ++I;
      continue;
    }
    B.row = Mm[Row].node;
    for (size_t J : Members) B.widths.push_back(Mm[J].out); // column outputs, split t ways
    B.widths.push_back(Mm[Row].in);                         // the row projection's input
    const std::set<int> Up = reach(G, Inside, {B.row}, false);
    for (int V : Forward)
      if (Down.count(V) && Up.count(V)) B.sharded.push_back(V);
    // The projections' weights (a transposed or cast weight is a data-free
    // node owning the parameter) are split with them.
    std::vector<int> Projections = B.column;
    Projections.push_back(B.row);
    for (int V : Projections)
      for (int E : G.inEdges(V)) {
        const int W = G.edge(E).src;
        if (DataFree[W] && Inside.count(W) &&
            std::find(B.sharded.begin(), B.sharded.end(), W) == B.sharded.end())
          B.sharded.push_back(W);
      }
    for (int V : B.sharded)
      if (G.node(V).op == "Softmax") {
        B.attention = true;
        const CostNode &S = G.node(V);
        const onnx::NodeProto &P = M.graph().node(S.onnxNodes.front());
        const TensorInfo *T = P.input_size() ? M.tensor(P.input(0)) : nullptr;
        // [batch, heads, q, k]; [batch, q, k]: one head, which no t > 1 splits.
        if (T && T->hasShape && T->dims.size() == 4) B.heads = static_cast<int>(T->dims[1]);
        else if (T && T->hasShape && T->dims.size() == 3) B.heads = 1;
      }
    Blocks.push_back(std::move(B));
    I = Row + 1;
  }
  return Blocks;
}

bool splits(const MegatronBlock &B, int T) {
  if (B.attention && (B.heads <= 0 || B.heads % T != 0)) return false;
  for (int64_t W : B.widths)
    if (W <= 0 || W % T != 0) return false;
  return true;
}

} // namespace

Expected<std::vector<MegatronLayer>> onnxp::megatronLayers(const CostGraph &G, const OnnxModel &M,
                                                           int MaxDegree) {
  if (!G.isTraining())
    return makeUsageError(
        "--algo piper on an ONNX model plans training: give a training graph or --training");
  LinearizeOptions LO;
  std::set<std::string> Weights;
  for (const ParameterInfo &P : findParameters(M)) Weights.insert(P.name);
  for (const auto &Init : M.graph().initializer()) Weights.insert(Init.name());
  for (const auto &In : M.graph().input())
    if (!M.isInitializer(In.name()) && !Weights.count(In.name()))
      if (const TensorInfo *T = M.tensor(In.name()))
        if (std::optional<double> B = T->bytes()) LO.inputBytes += *B;
  LO.dataFree = dataFreeNodes(G, M);
  LO.sideInputs = true;
  LO.layers = true; // --chain-recipe layers, kept whole (no balancing cuts)
  Expected<Linearization> L = linearizeGraph(G, LO);
  if (!L) return L.takeError();
  const bool AnyParams = hasParameterBytes(G);
  std::vector<MegatronLayer> Layers;
  auto ForwardOf = [&](size_t From, size_t To) {
    std::vector<int> F;
    for (size_t B = From; B < To; ++B)
      for (int V : L->chain.blocks[B].nodes)
        if (G.node(V).isForwardSide()) F.push_back(V);
    return F;
  };
  for (size_t Bk = 0, End = 1; Bk < L->chain.size(); Bk = End, End = Bk + 1) {
    MegatronLayer Ly;
    // The exporter's scope ("/layers.3"), else the block's separator.
    Ly.name = scopeKey(L->chain.blocks[Bk].name, Granularity::Block);
    if (Ly.name.empty()) Ly.name = L->chain.blocks[Bk].name;
    bool Open = false;
    Ly.blocks = findBlocks(G, M, LO.dataFree, Weights, ForwardOf(Bk, End), Open);
    // Without exporter scopes a layer is a separator block, and an
    // attention is cut at its separators (the softmax, the context
    // MatMul): a column group without its row projection takes the next
    // blocks in, up to kMaxMergedBlocks, when that completes more pairs.
    for (size_t E = End + 1; Open && E <= std::min(L->chain.size(), Bk + kMaxMergedBlocks); ++E) {
      bool MergedOpen = false;
      std::vector<MegatronBlock> Merged =
          findBlocks(G, M, LO.dataFree, Weights, ForwardOf(Bk, E), MergedOpen);
      if (Merged.size() <= Ly.blocks.size()) continue;
      Ly.blocks = std::move(Merged);
      Open = MergedOpen;
      End = E;
    }
    for (size_t B = Bk; B < End; ++B)
      Ly.nodes.insert(Ly.nodes.end(), L->chain.blocks[B].nodes.begin(), L->chain.blocks[B].nodes.end());
    std::set<int> Sharded;
    for (const MegatronBlock &B : Ly.blocks) Sharded.insert(B.sharded.begin(), B.sharded.end());
    TensorParallelLayer &C = Ly.costs;
    for (int V : Ly.nodes) {
      const CostNode &N = G.node(V);
      const bool Split =
          Sharded.count(V) || (N.partner >= 0 && Sharded.count(N.partner) && !N.isForwardSide());
      const double Ms = N.accTime;
      (N.isForwardSide() ? C.forwardMs : C.backwardMs) += Ms;
      if (Split) (N.isForwardSide() ? C.shardedForwardMs : C.shardedBackwardMs) += Ms;
      const double State = iterationStateBytes(N, AnyParams, true);
      C.stateBytes += State;
      C.gradientBytes += N.gradBytes;
      C.activationBytes += N.savedBytes;
      if (Split) {
        C.shardedStateBytes += State;
        C.shardedGradientBytes += N.gradBytes;
        C.shardedActivationBytes += N.savedBytes;
      }
    }
    C.inputBytes = L->chain.activationBytes(Bk);
    C.outputBytes = L->chain.blocks[End - 1].outputBytes;
    Ly.degrees = {1};
    if (!Ly.blocks.empty())
      for (int T : {2, 4, 8})
        if (T <= MaxDegree && std::all_of(Ly.blocks.begin(), Ly.blocks.end(),
                                          [&](const MegatronBlock &B) { return splits(B, T); }))
          Ly.degrees.push_back(T);
    if (Ly.degrees.size() > 1)
      for (const MegatronBlock &B : Ly.blocks) C.allReduceBytes.push_back(G.node(B.row).outputBytes);
    Layers.push_back(std::move(Ly));
  }
  return Layers;
}
