//===- API/PiperRecompute.cpp - Piper's recomputed layers in the model ---===//
//
// See PiperRecompute.h.
//
//===----------------------------------------------------------------------===//
#include "PiperRecompute.h"

#include <algorithm>
#include <cstdint>
#include <set>

using namespace onnxp;

namespace {
/// FNV-1a (32 bits) of Name, kept to 31 bits: tools/ort-runner's seed of an
/// unseeded Dropout (accumulators.js, seedAttribute).
int64_t dropoutSeed(const std::string &Name) {
  uint32_t H = 0x811c9dc5u;
  for (unsigned char C : Name) H = (H ^ C) * 0x01000193u;
  return H & 0x7fffffff;
}

/// Recomputation must redraw the mask the forward drew (as PyTorch's
/// checkpoint restores the RNG state): an unseeded Dropout draws a new one
/// per kernel, so each recomputed Dropout and its original get one seed.
void seedRecomputedDropouts(onnx::GraphProto &Graph, const std::map<std::string, std::string> &CopyOf) {
  std::set<std::string> Originals;
  for (const auto &[Copy, Original] : CopyOf) Originals.insert(Original);
  for (onnx::NodeProto &N : *Graph.mutable_node()) {
    if (N.op_type() != "Dropout" || N.output_size() == 0) continue;
    auto Copy = CopyOf.find(N.output(0));
    const std::string &Original = Copy == CopyOf.end() ? N.output(0) : Copy->second;
    if (Copy == CopyOf.end() && !Originals.count(Original)) continue;
    if (std::any_of(N.attribute().begin(), N.attribute().end(),
                    [](const onnx::AttributeProto &A) { return A.name() == "seed"; }))
      continue;
    onnx::AttributeProto *A = N.add_attribute();
    A->set_name("seed");
    A->set_type(onnx::AttributeProto::INT);
    A->set_i(dropoutSeed(Original));
  }
}
} // namespace

Expected<PiperRecompute> onnxp::rewritePiperRecompute(const CostGraph &G, const onnx::ModelProto &Model,
                                                      const PiperGraphRun &Run, const PiperGraphPlan &Plan,
                                                      const std::vector<char> &Backward) {
  PiperRecompute Out;
  Out.model = Model;
  const int L = static_cast<int>(Run.layers.size());
  std::vector<char> Recomputed(L, 0);
  for (const PiperGraphStage &St : Plan.stages)
    for (size_t Q = 0; Q < St.layers.size() && Q < St.recompute.size(); ++Q)
      Recomputed[St.layers[Q]] = St.recompute[Q];
  if (std::none_of(Recomputed.begin(), Recomputed.end(), [](char R) { return R != 0; })) return Out;
  // Layer k's forward ONNX nodes in graph order (the rewrite skips the
  // backward ones itself; the piper layers are the chain's blocks, disjoint).
  std::vector<std::vector<int>> LayerNodes(L);
  for (int K = 0; K < L; ++K) {
    for (int V : Run.layers[K].nodes)
      for (int I : G.node(V).onnxNodes)
        if (I < static_cast<int>(Backward.size()) && !Backward[I]) LayerNodes[K].push_back(I);
    std::sort(LayerNodes[K].begin(), LayerNodes[K].end());
  }
  // The activation schedule of Piper's per-layer choice (Piper §3: a layer
  // either stores its activations or keeps its input and runs its forward
  // again in the backward), in seed 001's operations.
  RematPlan R;
  R.feasible = true;
  R.layers.resize(L);
  for (int K = 1; K <= L; ++K) {
    const RematOpKind F = Recomputed[K - 1] ? RematOpKind::ForwardCheck : RematOpKind::ForwardAll;
    R.ops.push_back({F, K});
    R.layers[K - 1].forwardVariant = F;
    R.layers[K - 1].recomputations = Recomputed[K - 1] ? 1 : 0;
  }
  R.ops.push_back({RematOpKind::Loss, L + 1});
  for (int K = L; K >= 1; --K) {
    if (Recomputed[K - 1]) R.ops.push_back({RematOpKind::ForwardAll, K});
    R.ops.push_back({RematOpKind::Backward, K});
  }
  Expected<RecomputeRewriteResult> RR = rewriteActivationSchedule(Out.model, LayerNodes, R);
  if (!RR)
    return makeError("--algo piper: the recomputed layers cannot be written: ", RR.takeError().message());
  Out.rewrite = std::move(*RR);
  for (const auto &[Original, Copy] : Out.rewrite.recomputedTensors) Out.copyOf[Copy] = Original;
  seedRecomputedDropouts(*Out.model.mutable_graph(), Out.copyOf);
  return Out;
}
