//===- Cost/OrtFusionMatcher.h - Which nodes ORT folds and fuses -*- C++ -*-===//
//
// The rules mirror onnxruntime/core/optimizer/ (graph_transformer_utils.cc
// lists which transformers run at which level): constant_folding.cc for
// folding, conv_bn_fusion.cc / conv_add_fusion.cc / conv_mul_fusion.cc,
// conv_activation_fusion.cc, matmul_add_fusion.cc, gemm_activation_fusion.cc
// (OrtConvGemmFusions.cpp), layer_norm_fusion.cc, gelu_fusion.cc,
// skip_layer_norm_fusion.cc, attention_fusion.cc, bias_gelu_fusion.cc,
// fast_gelu_fusion.cc, quick_gelu_fusion.cc, matmul_scale_fusion.cc and
// div_mul_fusion.cc (OrtTransformerFusions.cpp). Each matcher is
// conservative: when a condition ORT checks is not obviously met here (an
// intermediate with a second consumer, a non-constant weight), the nodes
// stay separate kernels. Internal to lib/Cost: findOrtOptimizations
// (OrtGraphOptimizations.h) is the interface.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_COST_ORTFUSIONMATCHER_H
#define ONNXP_LIB_COST_ORTFUSIONMATCHER_H

#include "onnx-partition/Cost/OrtGraphOptimizations.h"

#include "ConstantValues.h"

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onnxp {

inline bool onnxDomain(const onnx::NodeProto &N) { return N.domain().empty() || N.domain() == "ai.onnx"; }

/// Marks, on the forward graph, the nodes ORT folds and the groups it fuses
/// into one kernel, rule by rule in ORT's order.
class OrtFusionMatcher {
public:
  OrtFusionMatcher(const CostGraph &G, const OnnxModel &M);

  /// The order is ORT's: Level 1 (MatMulAddFusion, the Conv rewrite rules)
  /// before Level 2, whose transformers run in graph_transformer_utils.cc's
  /// order (GemmActivation, ConvActivation, Gelu, LayerNorm,
  /// SimplifiedLayerNorm, Attention, BiasGelu, SkipLayerNorm, FastGelu,
  /// QuickGelu, MatMulScale). DivMul is a Level 1 rewrite, matched last so
  /// that SimplifiedLayerNorm sees through it first. Level 2 is repeated
  /// until nothing changes, so BiasGelu runs again after FastGelu.
  OrtOptimizationSummary run();

private:
  const OnnxModel &M;
  const onnx::GraphProto &OG;
  ConstantValues Values;
  OrtOptimizationSummary Sum;
  std::vector<int> AnchorOf;                 ///< node -> anchor of its group, or -1
  std::unordered_set<std::string> LnOutputs; ///< outputs of (fused) LayerNormalizations
  std::vector<std::vector<int>> MaskChains;  ///< attention masks: Unsqueeze, Unsqueeze, [Cast], Sub, Mul
  std::vector<bool> Eligible;
  std::unordered_map<std::string, int> Producer;
  std::unordered_map<std::string, std::vector<int>> Consumers;
  std::unordered_set<std::string> GraphOutputs, Constants;

  // Lookups over the ONNX graph and the marks made so far.
  bool free(int I) const { return I >= 0 && I < OG.node_size() && Eligible[I] && Sum.marks[I].empty(); }
  const onnx::NodeProto &node(int I) const { return OG.node(I); }
  /// Output 0 of node I, or "" when it has none.
  const std::string &out(int I) const {
    static const std::string None;
    return node(I).output_size() ? node(I).output(0) : None;
  }
  /// Input K of node I, or "" when it has fewer inputs (a malformed node
  /// matches nothing instead of reading past its inputs).
  const std::string &arg(int I, int K) const {
    static const std::string None;
    return K < node(I).input_size() ? node(I).input(K) : None;
  }
  bool isOp(int I, const char *Op) const { return free(I) && node(I).op_type() == Op && onnxDomain(node(I)); }
  /// The only consumer of node I's output 0, or -1 (several, none, or a graph output).
  int soleConsumer(int I) const {
    const onnx::NodeProto &N = node(I);
    if (N.output_size() < 1 || N.output(0).empty() || GraphOutputs.count(N.output(0))) return -1;
    for (int O = 1; O < N.output_size(); ++O)
      if (!N.output(O).empty() && (Consumers.count(N.output(O)) || GraphOutputs.count(N.output(O))))
        return -1;
    auto It = Consumers.find(N.output(0));
    if (It == Consumers.end() || It->second.size() != 1) return -1;
    return It->second[0];
  }
  bool constant(const std::string &T) const { return T.empty() || Constants.count(T) > 0; }
  /// The input of J that is not I's output (binary ops), or "".
  std::string otherInput(int J, int I) const {
    const onnx::NodeProto &N = node(J);
    if (N.input_size() != 2) return "";
    return N.input(0) == node(I).output(0) ? N.input(1) : N.input(0);
  }
  std::string kindOf(int Anchor) const { return Sum.marks[Anchor].substr(7); }
  int producer(const std::string &T) const {
    auto P = Producer.find(T);
    return P == Producer.end() ? -1 : P->second;
  }
  /// The producer of input Slot of node J, or -1.
  int parent(int J, int Slot) const {
    return J >= 0 && Slot < node(J).input_size() ? producer(node(J).input(Slot)) : -1;
  }
  const TensorInfo *info(const std::string &T) const { return T.empty() ? nullptr : M.tensor(T); }
  /// Whether every reader of T is in Group and T is no graph output (ORT
  /// removes the group's nodes, so nothing else may read what they make).
  bool readOnlyBy(const std::string &T, const std::set<int> &Group) const {
    if (GraphOutputs.count(T)) return false;
    auto C = Consumers.find(T);
    if (C == Consumers.end()) return false;
    for (int U : C->second)
      if (!Group.count(U)) return false;
    return true;
  }
  /// The other operand of a binary node J whose operand Slot comes from I.
  std::string operandBeside(int J, const std::string &T) const {
    const onnx::NodeProto &N = node(J);
    if (N.input_size() != 2) return "";
    if (N.input(0) == T) return N.input(1);
    return N.input(1) == T ? N.input(0) : "";
  }
  bool msOp(int I, const char *Op) const {
    return I >= 0 && I < OG.node_size() && Eligible[I] && node(I).op_type() == Op &&
           node(I).domain() == "com.microsoft";
  }
  std::optional<int64_t> intAttr(int I, const char *Name) const {
    for (const auto &A : node(I).attribute())
      if (A.name() == Name) return A.i();
    return std::nullopt;
  }
  std::vector<int64_t> intsAttr(int I, const char *Name) const {
    for (const auto &A : node(I).attribute())
      if (A.name() == Name) return std::vector<int64_t>(A.ints().begin(), A.ints().end());
    return {};
  }
  int64_t defaultOpset() const {
    for (const auto &O : M.proto.opset_import())
      if (O.domain().empty() || O.domain() == "ai.onnx") return O.version();
    return 0;
  }
  std::vector<int64_t> perm(int I) const { return intsAttr(I, "perm"); }
  bool is(int X, const char *Op) const { return X >= 0 && node(X).op_type() == Op && onnxDomain(node(X)); }
  /// Whether ORT sees every shape static: the model has no symbolic dims.
  bool staticModel() const { return M.dimBindings.empty() && M.unboundDims.empty(); }

  // Folding and grouping (OrtFusionMatcher.cpp).
  void fold();
  void group(int Anchor, const std::vector<int> &Members, const std::string &Kind);
  void extend(int Anchor, const std::vector<int> &Members, const std::string &Kind);
  void groupOrExtend(int Kernel, const std::vector<int> &Members, const std::string &Kind);

  // Conv and MatMul/Gemm rules (OrtConvGemmFusions.cpp).
  bool activation(int I) const;
  void matchConv(int ConvN);
  void matchMatMulOrGemm(int I);

  // Transformer rules (OrtTransformerFusions.cpp).
  void matchLayerNorm(int Mean1);
  void matchSimplifiedLayerNorm(int PowN);
  bool reciprocal(int DivN) const;
  void matchDivMul(int DivN);
  void matchQuickGelu(int First);
  std::string scaled(int J) const;
  void matchMatMulScale(int I);
  void matchGelu(int ErfN);
  void matchFastGelu(int First);
  void matchBiasGelu(int AddN);
  bool constantOfDims(const std::string &T, const std::vector<int64_t> &Dims) const;
  bool projection(int Tip, int Slot, const std::string &Root, int64_t W, const std::vector<int64_t> &Perm,
                  int64_t &Heads, std::vector<int> &Nodes) const;
  const std::vector<int> *attentionRoot(int I, int64_t &W) const;
  void matchAttention(int I);
  void matchMaskChains();
  std::pair<int, int> gemmSubgraph(int Last, int64_t W, int64_t Cols) const;
  bool readOnlyByOrFolded(const std::string &T, const std::set<int> &Group) const;
  void matchGptAttention(int I);
  const TensorInfo *rank3(const std::string &T) const;
  void matchSkipLayerNorm(int Ln);
};

} // namespace onnxp

#endif // ONNXP_LIB_COST_ORTFUSIONMATCHER_H
