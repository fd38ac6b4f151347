//===- Cost/OrtGraphOptimizations.cpp - Price the graph ORT executes ----===//
//
// The rules mirror onnxruntime/core/optimizer/ (graph_transformer_utils.cc
// lists which transformers run at which level): constant_folding.cc for
// folding, conv_bn_fusion.cc / conv_add_fusion.cc / conv_mul_fusion.cc,
// conv_activation_fusion.cc, matmul_add_fusion.cc, gemm_activation_fusion.cc,
// layer_norm_fusion.cc, gelu_fusion.cc, skip_layer_norm_fusion.cc,
// attention_fusion.cc, bias_gelu_fusion.cc, fast_gelu_fusion.cc and
// quick_gelu_fusion.cc for the fusions. Each matcher is conservative: when a condition ORT checks is not
// obviously met here (an intermediate with a second consumer, a non-constant
// weight), the nodes stay separate kernels.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/OrtGraphOptimizations.h"

#include "onnx-partition/Cost/Roofline.h"

#include "ConstantValues.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

namespace {
bool onnxDomain(const onnx::NodeProto &N) { return N.domain().empty() || N.domain() == "ai.onnx"; }

bool hasSubgraph(const onnx::NodeProto &N) {
  for (const auto &A : N.attribute())
    if (A.has_g() || A.graphs_size() > 0) return true;
  return false;
}

/// optimizer_utils::IsOperationDeterministic: the random generators.
bool deterministic(const onnx::NodeProto &N) {
  static const std::unordered_set<std::string> Random = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"};
  return !Random.count(N.op_type());
}

class Matcher {
public:
  Matcher(const CostGraph &G, const OnnxModel &M)
      : M(M), OG(M.graph()), Values(M.graph(), M.proto.ir_version() >= 4) {
    Sum.marks.assign(G.numNodes(), "");
    AnchorOf.assign(OG.node_size(), -1);
    Eligible.assign(OG.node_size(), false);
    for (size_t V = 0; V < G.numNodes(); ++V) {
      const CostNode &N = G.node(static_cast<int>(V));
      if (N.onnxNodes.size() == 1 && N.onnxNodes[0] == static_cast<int>(V) && N.role == Role::Forward)
        Eligible[V] = true;
    }
    for (int I = 0; I < OG.node_size(); ++I) {
      for (const std::string &O : OG.node(I).output())
        if (!O.empty()) Producer[O] = I;
      for (const std::string &In : OG.node(I).input())
        if (!In.empty()) Consumers[In].push_back(I);
    }
    for (const auto &O : OG.output()) GraphOutputs.insert(O.name());
    std::unordered_set<std::string> Inputs;
    for (const auto &I : OG.input()) Inputs.insert(I.name());
    // Graph::GetConstantInitializer: from IR 4 on, an initializer that is
    // also a graph input can be overridden by a feed, so it is no constant.
    for (const auto &I : OG.initializer())
      if (M.proto.ir_version() < 4 || !Inputs.count(I.name())) Constants.insert(I.name());
  }

  /// The order is ORT's: Level 1 (MatMulAddFusion, the Conv rewrite rules)
  /// before Level 2, whose transformers run in graph_transformer_utils.cc's
  /// order (GemmActivation, ConvActivation, Gelu, LayerNorm,
  /// SimplifiedLayerNorm, Attention, BiasGelu, SkipLayerNorm, FastGelu,
  /// QuickGelu, MatMulScale). DivMul is a Level 1 rewrite, matched last so
  /// that SimplifiedLayerNorm sees through it first. Level 2 is repeated
  /// until nothing changes, so BiasGelu runs again after FastGelu.
  OrtOptimizationSummary run() {
    fold();
    for (int I = 0; I < OG.node_size(); ++I) matchConv(I);
    for (int I = 0; I < OG.node_size(); ++I) matchMatMulOrGemm(I);
    for (int I = 0; I < OG.node_size(); ++I) matchGelu(I);
    for (int I = 0; I < OG.node_size(); ++I) matchLayerNorm(I);
    for (int I = 0; I < OG.node_size(); ++I) matchSimplifiedLayerNorm(I);
    for (int I = 0; I < OG.node_size(); ++I) matchAttention(I);
    matchMaskChains();
    for (int I = 0; I < OG.node_size(); ++I) matchGptAttention(I);
    for (int I = 0; I < OG.node_size(); ++I) matchBiasGelu(I);
    for (int I = 0; I < OG.node_size(); ++I) matchSkipLayerNorm(I);
    for (int I = 0; I < OG.node_size(); ++I) matchFastGelu(I);
    for (int I = 0; I < OG.node_size(); ++I) matchQuickGelu(I);
    for (int I = 0; I < OG.node_size(); ++I) matchMatMulScale(I);
    for (int I = 0; I < OG.node_size(); ++I) matchDivMul(I);
    for (int I = 0; I < OG.node_size(); ++I) matchBiasGelu(I);
    return std::move(Sum);
  }

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

  /// constant_folding.cc: a deterministic ONNX-domain node without
  /// subgraphs whose inputs are all constant, or a Shape of a static shape.
  void fold() {
    std::unordered_set<std::string> Estimated(M.estimatedShapeTensors.begin(), M.estimatedShapeTensors.end());
    for (int I = 0; I < OG.node_size(); ++I) { // graph order is topological (checked on import)
      if (!free(I)) continue;
      const onnx::NodeProto &N = node(I);
      if (!onnxDomain(N) || hasSubgraph(N) || !deterministic(N)) continue;
      bool Foldable = true;
      if (N.op_type() == "Shape") {
        const TensorInfo *T = N.input_size() ? M.tensor(N.input(0)) : nullptr;
        Foldable = T && T->fullyKnown() && !Estimated.count(N.input(0));
      } else {
        for (const std::string &In : N.input()) Foldable &= constant(In);
      }
      if (!Foldable) continue;
      Sum.marks[I] = "folded";
      ++Sum.folded;
      for (const std::string &O : N.output())
        if (!O.empty()) Constants.insert(O);
    }
  }

  void group(int Anchor, const std::vector<int> &Members, const std::string &Kind) {
    Sum.marks[Anchor] = "anchor:" + Kind;
    AnchorOf[Anchor] = Anchor;
    std::vector<int> &Group = Sum.groups[Anchor];
    Group.push_back(Anchor);
    for (int X : Members) Sum.marks[X] = "fused:" + Kind, Group.push_back(X), AnchorOf[X] = Anchor;
    Sum.fusedNodes += Members.size();
    ++Sum.fusions[Kind];
  }

  std::string kindOf(int Anchor) const { return Sum.marks[Anchor].substr(7); }

  /// A later fusion absorbs free nodes into an existing group (BiasGelu
  /// into a Gelu, the Adds of SkipLayerNormalization into a LayerNorm): the
  /// group keeps its anchor and takes the new kind.
  void extend(int Anchor, const std::vector<int> &Members, const std::string &Kind) {
    if (--Sum.fusions[kindOf(Anchor)] == 0) Sum.fusions.erase(kindOf(Anchor));
    ++Sum.fusions[Kind];
    std::vector<int> &Group = Sum.groups[Anchor];
    for (int X : Members) Group.push_back(X), AnchorOf[X] = Anchor;
    for (int X : Group) Sum.marks[X] = (X == Anchor ? "anchor:" : "fused:") + Kind;
    Sum.fusedNodes += Members.size();
  }

  /// A group with one node as the kernel (the ONNX or contrib op itself).
  void groupOrExtend(int Kernel, const std::vector<int> &Members, const std::string &Kind) {
    if (AnchorOf[Kernel] >= 0) extend(AnchorOf[Kernel], Members, Kind);
    else group(Kernel, Members, Kind);
  }

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

  /// layer_norm_fusion.cc: ReduceMean(x) -> Sub(x, mean) -> Pow(., 2) ->
  /// ReduceMean -> Add(eps) -> Sqrt -> Div(sub, sqrt) -> Mul(scale) -> Add(bias).
  /// Older PyTorch exports compute x - mean twice, one Sub for Pow and one
  /// for Div; ORT fuses that form as well.
  void matchLayerNorm(int Mean1) {
    if (!isOp(Mean1, "ReduceMean")) return;
    const std::string &X = arg(Mean1, 0), &Mean = out(Mean1);
    auto Users = Consumers.find(Mean);
    if (GraphOutputs.count(Mean) || Users == Consumers.end() || Users->second.empty() ||
        Users->second.size() > 2)
      return;
    int PowN = -1, DivN = -1;
    std::vector<int> Subs;
    for (int SubN : Users->second) {
      if (!isOp(SubN, "Sub") || arg(SubN, 0) != X || arg(SubN, 1) != Mean) return;
      if (std::find(Subs.begin(), Subs.end(), SubN) != Subs.end()) return;
      Subs.push_back(SubN);
      auto SubUsers = Consumers.find(out(SubN));
      if (GraphOutputs.count(out(SubN)) || SubUsers == Consumers.end()) return;
      for (int U : SubUsers->second) {
        if (PowN < 0 && isOp(U, "Pow")) PowN = U;
        else if (DivN < 0 && isOp(U, "Div") && arg(U, 0) == out(SubN)) DivN = U;
        else return; // x - mean read by anything else: ORT keeps it
      }
    }
    if (PowN < 0 || DivN < 0) return;
    int Mean2 = soleConsumer(PowN);
    if (!isOp(Mean2, "ReduceMean")) return;
    int AddEps = soleConsumer(Mean2);
    if (!isOp(AddEps, "Add")) return;
    int SqrtN = soleConsumer(AddEps);
    if (!isOp(SqrtN, "Sqrt") || soleConsumer(SqrtN) != DivN) return;
    std::vector<int> Members = Subs;
    Members.insert(Members.end(), {PowN, Mean2, AddEps, SqrtN, DivN});
    int Last = DivN;
    if (int MulN = soleConsumer(DivN); isOp(MulN, "Mul")) {
      Members.push_back(MulN);
      Last = MulN;
      if (int AddB = soleConsumer(MulN); isOp(AddB, "Add")) Members.push_back(AddB), Last = AddB;
    }
    group(Mean1, Members, "LayerNormalization");
    LnOutputs.insert(out(Last));
  }

  /// layer_norm_fusion.cc, SimplifiedLayerNormFusion (RMSNorm): Pow(x) ->
  /// ReduceMean -> Add(eps) -> Sqrt -> Div(x, .) -> Mul(1-D scale), each
  /// intermediate read once. (ORT checks neither the exponent nor eps.) A
  /// Div(1, sqrt) then Mul(x, .) is not this pattern and stays unfused; the
  /// Cast-wrapped fp16 forms (GPU only) are not matched.
  void matchSimplifiedLayerNorm(int PowN) {
    if (!isOp(PowN, "Pow")) return;
    const std::string &X = arg(PowN, 0);
    int Mean = soleConsumer(PowN);
    if (!isOp(Mean, "ReduceMean")) return;
    int AddEps = soleConsumer(Mean);
    if (!isOp(AddEps, "Add")) return;
    int SqrtN = soleConsumer(AddEps);
    if (!isOp(SqrtN, "Sqrt")) return;
    int DivN = soleConsumer(SqrtN);
    if (!isOp(DivN, "Div") || arg(DivN, 1) != out(SqrtN)) return;
    std::vector<int> Members = {Mean, AddEps, SqrtN, DivN};
    int Normed = DivN;
    if (arg(DivN, 0) != X) { // Div(1, sqrt) -> Mul(x, .): DivMulFusion (Level 1) made it Div(x, sqrt)
      int XMul = soleConsumer(DivN);
      if (!reciprocal(DivN) || !isOp(XMul, "Mul") || otherInput(XMul, DivN) != X) return;
      Members.push_back(XMul);
      Normed = XMul;
    }
    int MulN = soleConsumer(Normed);
    if (!isOp(MulN, "Mul")) return;
    const TensorInfo *Scale = info(otherInput(MulN, Normed));
    if (!Scale || !Scale->hasShape || Scale->dims.size() != 1) return;
    Members.push_back(MulN);
    group(PowN, Members, "SimplifiedLayerNormalization");
  }

  /// div_mul_fusion.cc's condition: Div(1, x) (a one-element constant of
  /// exactly 1) whose only reader is a Mul.
  bool reciprocal(int DivN) const {
    if (!isOp(DivN, "Div") || node(DivN).input_size() != 2) return false;
    std::optional<double> One = Values.scalar(arg(DivN, 0));
    return One && *One == 1.0 && isOp(soleConsumer(DivN), "Mul");
  }

  /// div_mul_fusion.cc (a Level 1 rewrite): Div(1, x) -> Mul(y, .) becomes
  /// Div(y, x), one kernel.
  void matchDivMul(int DivN) {
    if (reciprocal(DivN)) group(DivN, {soleConsumer(DivN)}, "DivMul");
  }

  /// quick_gelu_fusion.cc: x * Sigmoid(alpha * x) or x * Sigmoid(x) (SiLU,
  /// Swish) -> one QuickGelu; alpha is any scalar constant.
  void matchQuickGelu(int First) {
    std::string X;
    std::vector<int> Members;
    int Sig = First;
    if (isOp(First, "Mul") && node(First).input_size() == 2) {
      int Slot = Values.scalar(arg(First, 0)) ? 0 : Values.scalar(arg(First, 1)) ? 1 : -1;
      if (Slot < 0) return;
      X = node(First).input(1 - Slot);
      Sig = soleConsumer(First);
      Members.push_back(Sig);
    }
    if (!isOp(Sig, "Sigmoid")) return;
    if (X.empty()) X = arg(Sig, 0);
    int MulN = soleConsumer(Sig);
    if (!isOp(MulN, "Mul") || otherInput(MulN, Sig) != X) return;
    Members.push_back(MulN);
    group(First, Members, "QuickGelu");
  }

  /// A Mul or Div of J by a one-element constant (the divisor in slot 1),
  /// no higher in rank than the other operand: returns the other operand.
  std::string scaled(int J) const {
    if (J < 0 || !Eligible[J] || !onnxDomain(node(J)) || node(J).input_size() != 2) return "";
    bool Div = node(J).op_type() == "Div";
    if (!Div && node(J).op_type() != "Mul") return "";
    for (int Slot = Div ? 1 : 0; Slot < 2; ++Slot) {
      const TensorInfo *C = info(node(J).input(Slot)), *X = info(node(J).input(1 - Slot));
      std::optional<double> N = C ? C->numElements() : std::nullopt;
      if (constant(node(J).input(Slot)) && N && *N == 1 && X && X->hasShape &&
          C->dims.size() <= X->dims.size())
        return node(J).input(1 - Slot);
    }
    return "";
  }

  /// matmul_scale_fusion.cc: a MatMul whose only reader multiplies or
  /// divides it by a scalar constant, or whose operand is such a scaled
  /// tensor, becomes one FusedMatMul (the scale is its alpha). A scaling
  /// node that feeds others stays and the FusedMatMul reads its input.
  void matchMatMulScale(int I) {
    if (!isOp(I, "MatMul") || node(I).input_size() != 2) return;
    const TensorInfo *A = info(arg(I, 0));
    static const std::set<int32_t> Types = {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE,
                                            onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16};
    if (!A || !Types.count(A->elemType)) return;
    std::vector<int> Members;
    bool Scaled = false;
    for (int Slot = 0; Slot < 2; ++Slot) {
      int In = parent(I, Slot);
      if (!free(In)) continue;
      const TensorInfo *X = info(scaled(In));
      if (!X || !X->hasShape || X->dims.empty()) continue; // the scaled operand must not be a scalar
      Scaled = true;
      if (readOnlyBy(out(In), {I}) && std::find(Members.begin(), Members.end(), In) == Members.end())
        Members.push_back(In);
    }
    if (int Out = soleConsumer(I); free(Out) && !scaled(Out).empty()) Scaled = true, Members.push_back(Out);
    if (!Scaled) return;
    group(I, Members, "FusedMatMul");
  }

  /// gelu_fusion.cc: Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5),
  /// or with the 0.5 multiplying x first. ORT checks each constant's value
  /// (sqrt 2 as M_SQRT2 or BERT's 1.4142099618911743); Mul by 1/sqrt 2 in
  /// place of the Div is taken as well.
  void matchGelu(int ErfN) {
    if (!isOp(ErfN, "Erf")) return;
    int Scale = producer(arg(ErfN, 0));
    if (!(isOp(Scale, "Div") || isOp(Scale, "Mul")) || soleConsumer(Scale) != ErfN) return;
    if (node(Scale).input_size() != 2) return;
    const std::string &X = arg(Scale, 0), &C = arg(Scale, 1);
    bool Sqrt2 = node(Scale).op_type() == "Div" ? Values.is(C, M_SQRT2) || Values.is(C, 1.4142099618911743)
                                                : Values.is(C, M_SQRT1_2);
    if (!Sqrt2) return;
    int AddN = soleConsumer(ErfN);
    if (!isOp(AddN, "Add") || !Values.is(otherInput(AddN, ErfN), 1.0)) return;
    int Mul1 = soleConsumer(AddN);
    if (!isOp(Mul1, "Mul")) return;
    std::vector<int> Members = {ErfN, AddN, Mul1};
    std::string Other = otherInput(Mul1, AddN);
    if (Other != X) { // x * 0.5 computed first: Mul(x, 0.5) feeds Mul1
      int Half = producer(Other);
      if (!isOp(Half, "Mul") || soleConsumer(Half) != Mul1 || operandBeside(Half, X).empty() ||
          !Values.is(operandBeside(Half, X), 0.5))
        return;
      Members.push_back(Half);
    } else {
      int Mul2 = soleConsumer(Mul1);
      if (!isOp(Mul2, "Mul") || !Values.is(otherInput(Mul2, Mul1), 0.5)) return;
      Members.push_back(Mul2);
    }
    group(Scale, Members, "Gelu");
  }

  /// fast_gelu_fusion.cc: the tanh approximation of Gelu,
  ///   0.5 x (1 + tanh(0.7978845834732056 (x + 0.044715 x^3))),
  /// written as x * 0.044715 * x + 1, times x * 0.79788 (first formula), or
  /// Pow(x, 3) * 0.044715 + x, times 0.79788 (second formula); then Tanh ->
  /// Add(1) -> Mul(., x * 0.5). Every constant is checked by value. The fp16
  /// form with Cast nodes around it is not matched.
  void matchFastGelu(int First) {
    std::string X;
    std::vector<int> Members;
    int TanhIn = -1;
    if (isOp(First, "Mul") && node(First).input_size() == 2) { // first formula
      int Slot = Values.is(arg(First, 0), 0.044715) ? 0 : Values.is(arg(First, 1), 0.044715) ? 1 : -1;
      if (Slot < 0) return;
      X = node(First).input(1 - Slot);
      int Mul2 = soleConsumer(First);
      if (!isOp(Mul2, "Mul") || otherInput(Mul2, First) != X) return;
      int Add1 = soleConsumer(Mul2);
      if (!isOp(Add1, "Add") || !Values.is(otherInput(Add1, Mul2), 1.0)) return;
      int Mul3 = soleConsumer(Add1);
      if (!isOp(Mul3, "Mul")) return;
      int Mul4 = producer(otherInput(Mul3, Add1));
      if (!isOp(Mul4, "Mul") || soleConsumer(Mul4) != Mul3 || operandBeside(Mul4, X).empty() ||
          !Values.is(operandBeside(Mul4, X), 0.7978845834732056))
        return;
      Members = {Mul2, Add1, Mul3, Mul4};
      TanhIn = Mul3;
    } else if (isOp(First, "Pow") && node(First).input_size() == 2) { // second formula
      if (!Values.is(arg(First, 1), 3.0)) return;
      X = arg(First, 0);
      int Mul1 = soleConsumer(First);
      if (!isOp(Mul1, "Mul") || !Values.is(otherInput(Mul1, First), 0.044714998453855515)) return;
      int Add1 = soleConsumer(Mul1);
      if (!isOp(Add1, "Add") || otherInput(Add1, Mul1) != X) return;
      int Mul2 = soleConsumer(Add1);
      if (!isOp(Mul2, "Mul") || !Values.is(otherInput(Mul2, Add1), 0.7978845834732056)) return;
      Members = {Mul1, Add1, Mul2};
      TanhIn = Mul2;
    } else {
      return;
    }
    int TanhN = soleConsumer(TanhIn);
    if (!isOp(TanhN, "Tanh")) return;
    int Add2 = soleConsumer(TanhN);
    if (!isOp(Add2, "Add") || !Values.is(otherInput(Add2, TanhN), 1.0)) return;
    int Mul5 = -1;
    if (auto C = Consumers.find(out(Add2));
        C != Consumers.end() && C->second.size() == 1 && !GraphOutputs.count(out(Add2)))
      Mul5 = C->second[0];
    if (!isOp(Mul5, "Mul") || GraphOutputs.count(out(Mul5))) return;
    int Mul6 = producer(otherInput(Mul5, Add2));
    if (!isOp(Mul6, "Mul") || soleConsumer(Mul6) != Mul5 || operandBeside(Mul6, X).empty() ||
        !Values.is(operandBeside(Mul6, X), 0.5))
      return;
    Members.insert(Members.end(), {TanhN, Add2, Mul6, Mul5});
    group(First, Members, "FastGelu");
  }

  /// bias_gelu_fusion.cc: Add(x, bias) whose only reader is a Gelu (fused
  /// above or a contrib Gelu) becomes BiasGelu; before a FastGelu without a
  /// bias input, the bias joins the FastGelu. The bias is 1-D with x's last
  /// dim (ORT does not require it to be constant).
  void matchBiasGelu(int AddN) {
    if (!isOp(AddN, "Add") || node(AddN).input_size() != 2) return;
    const std::string &T = out(AddN);
    auto C = Consumers.find(T);
    if (C == Consumers.end() || C->second.empty()) return;
    int Target = C->second[0], Kernel = -1;
    std::string Kind;
    std::set<int> Readers;
    if (int A = AnchorOf[Target]; A >= 0 && (kindOf(A) == "Gelu" || kindOf(A) == "FastGelu")) {
      Kernel = A;
      Kind = kindOf(A) == "Gelu" ? "BiasGelu" : "BiasFastGelu";
      Readers.insert(Sum.groups[A].begin(), Sum.groups[A].end());
    } else if (msOp(Target, "Gelu") && Sum.marks[Target].empty()) {
      Kernel = Target, Kind = "BiasGelu", Readers = {Target};
    } else if (msOp(Target, "FastGelu") && Sum.marks[Target].empty() && node(Target).input_size() == 1) {
      Kernel = Target, Kind = "BiasFastGelu", Readers = {Target};
    } else {
      return;
    }
    if (!readOnlyBy(T, Readers)) return;
    const TensorInfo *A = info(arg(AddN, 0)), *B = info(arg(AddN, 1));
    if (!A || !B || !A->hasShape || !B->hasShape || A->dims.empty() || B->dims.empty()) return;
    if (A->dims.back() <= 0 || A->dims.back() != B->dims.back()) return;
    if (A->dims.size() != 1 && B->dims.size() != 1) return;
    groupOrExtend(Kernel, {AddN}, Kind);
  }

  /// A constant operand of dims Dims (ValidateMatMulInitializer,
  /// ValidateAddBiasInitializer) of a float or float16 type (LoadQkvWeights).
  bool constantOfDims(const std::string &T, const std::vector<int64_t> &Dims) const {
    const TensorInfo *I = info(T);
    return constant(T) && I && I->hasShape && I->dims == Dims &&
           (I->elemType == onnx::TensorProto::FLOAT || I->elemType == onnx::TensorProto::FLOAT16);
  }

  /// One projection of attention_fusion.cc's paths q, k and v:
  /// Root -> MatMul(W x W weight) -> Add(W bias) -> Reshape([0, 0, N, H]) ->
  /// Transpose(Perm), read from Tip's input Slot. Appends its nodes.
  bool projection(int Tip, int Slot, const std::string &Root, int64_t W, const std::vector<int64_t> &Perm,
                  int64_t &Heads, std::vector<int> &Nodes) const {
    int Tr = parent(Tip, Slot), Rs = parent(Tr, 0), Bias = parent(Rs, 0), Mm = parent(Bias, 0);
    if (!isOp(Tr, "Transpose") || perm(Tr) != Perm || !isOp(Rs, "Reshape") || !isOp(Bias, "Add") ||
        !isOp(Mm, "MatMul") || arg(Mm, 0) != Root || arg(Bias, 0) != out(Mm))
      return false;
    if (!constantOfDims(arg(Mm, 1), {W, W}) || !constantOfDims(arg(Bias, 1), {W})) return false;
    // CheckNodesInPathQ/K/V: the heads split as [0, 0, N, H], N * H = W.
    std::optional<std::vector<int64_t>> Shape = Values.ints(arg(Rs, 1));
    if (!Shape || Shape->size() != 4 || (*Shape)[0] != 0 || ((*Shape)[1] != 0 && (*Shape)[1] != -1) ||
        (*Shape)[2] <= 0 || (*Shape)[2] * (*Shape)[3] != W || (Heads && (*Shape)[2] != Heads))
      return false;
    Heads = (*Shape)[2];
    Nodes.insert(Nodes.end(), {Mm, Bias, Rs, Tr});
    return true;
  }

  /// Where both attention forms start: the output of node I, a
  /// LayerNormalization (an ONNX node or one fused above) whose last dim W is
  /// known, read by 2 to 6 nodes. Returns those readers, or null.
  const std::vector<int> *attentionRoot(int I, int64_t &W) const {
    if (I < 0 || !Eligible[I] || node(I).output_size() < 1) return nullptr;
    const std::string &L = out(I);
    if (!isOp(I, "LayerNormalization") && !LnOutputs.count(L)) return nullptr;
    const TensorInfo *LI = info(L);
    if (!LI || !LI->hasShape || LI->dims.empty() || LI->dims.back() <= 0) return nullptr;
    auto Users = Consumers.find(L);
    if (Users == Consumers.end() || Users->second.size() < 2 || Users->second.size() > 6) return nullptr;
    W = LI->dims.back();
    return &Users->second;
  }

  /// attention_fusion.cc (AttentionFusion::FuseSubGraph, the BERT form). From
  /// a LayerNormalization (an ONNX node or one fused above) read by one Add
  /// (the residual), three MatMuls and otherwise only Shapes:
  ///   q, k, v = LN -> MatMul -> Add -> Reshape -> Transpose (k as 0,2,3,1),
  ///   MatMul(q, k) -> Div(sqrt H) -> Add(mask) -> Softmax -> MatMul(., v)
  ///   -> Transpose(0,2,1,3) -> Reshape([0, 0, W]) -> MatMul -> Add -> the residual Add,
  /// with the mask made as Unsqueeze -> Unsqueeze -> (Cast) -> Sub -> Mul.
  /// Everything from the three projections to the last Reshape is one
  /// Attention kernel. The output projection after it stays a MatMul and an
  /// Add (SkipLayerNormalization may take the Add); the mask nodes stay
  /// separate (ORT replaces them with one Cast of the mask, shared by the
  /// layers). Weights must be constant W x W, biases W, W the LN's last dim.
  void matchAttention(int I) {
    int64_t W = 0;
    const std::vector<int> *Users = attentionRoot(I, W);
    if (!Users) return;
    const std::string &L = out(I);
    int Residual = -1, MatMuls = 0, Shapes = 0, Adds = 0;
    for (int U : *Users) {
      const std::string &Op = node(U).op_type();
      if (Op == "Add") ++Adds, Residual = U;
      else if (Op == "MatMul") ++MatMuls;
      else if (Op == "Shape") ++Shapes;
    }
    if (Adds != 1 || MatMuls != 3 || Shapes + 4 != static_cast<int>(Users->size())) return;

    // Path v, up from the residual Add's first input.
    int OutBias = parent(Residual, 0), OutMm = parent(OutBias, 0), OutRs = parent(OutMm, 0),
        OutTr = parent(OutRs, 0), Qkv = parent(OutTr, 0);
    if (!is(OutBias, "Add") || !is(OutMm, "MatMul") || !isOp(OutRs, "Reshape") || !isOp(OutTr, "Transpose") ||
        !isOp(Qkv, "MatMul") || perm(OutTr) != std::vector<int64_t>{0, 2, 1, 3})
      return;
    if (!constantOfDims(arg(OutMm, 1), {W, W}) || !constantOfDims(arg(OutBias, 1), {W})) return;
    std::optional<std::vector<int64_t>> Merge = Values.ints(arg(OutRs, 1));
    if (!Merge || Merge->size() != 3 || (*Merge)[0] != 0 || (*Merge)[1] != 0 ||
        ((*Merge)[2] != W && (*Merge)[2] != -1))
      return;
    int64_t Heads = 0;
    std::vector<int> Nodes = {OutRs, OutTr, Qkv};
    if (!projection(Qkv, 1, L, W, {0, 2, 1, 3}, Heads, Nodes)) return;

    // The mask: Softmax(Add(Div(MatMul(q, k), sqrt H), mask)).
    int Soft = parent(Qkv, 0), MaskAdd = parent(Soft, 0), Scale = parent(MaskAdd, 0), Qk = parent(Scale, 0);
    if (!isOp(Soft, "Softmax") || !isOp(MaskAdd, "Add") || !isOp(Scale, "Div") || !isOp(Qk, "MatMul")) return;
    // MatchInputMaskSubgraph: Softmax with the attribute axis = 3, its Add
    // reading Mul(Sub(1, [Cast](Unsqueeze<axes 2>(Unsqueeze<axes 1>(mask)))),
    // -10000) in slot 1; the Add, Sub, Cast and Unsqueezes read once. ORT
    // matches Unsqueeze only at versions 1 and 11 and Cast at 9, so the form
    // exists only up to opset 12 (an opset-13 export is not fused).
    if (defaultOpset() > 12 || intAttr(Soft, "axis") != std::optional<int64_t>(3)) return;
    int MaskMul = parent(MaskAdd, 1), MaskSub = parent(MaskMul, 0);
    if (!is(MaskMul, "Mul") || !is(MaskSub, "Sub") || soleConsumer(MaskSub) != MaskMul) return;
    if (!Values.is(arg(MaskSub, 0), 1.0) || !Values.is(arg(MaskMul, 1), -10000.0)) return;
    int Up = parent(MaskSub, 1);
    if (is(Up, "Cast") && soleConsumer(Up) == MaskSub) Up = parent(Up, 0);
    int Up1 = parent(Up, 0);
    if (!is(Up, "Unsqueeze") || !is(Up1, "Unsqueeze") || soleConsumer(Up1) != Up || soleConsumer(Up) < 0 ||
        intsAttr(Up, "axes") != std::vector<int64_t>{2} || intsAttr(Up1, "axes") != std::vector<int64_t>{1})
      return;
    Nodes.insert(Nodes.end(), {Soft, MaskAdd, Scale, Qk});
    if (!projection(Qk, 0, L, W, {0, 2, 1, 3}, Heads, Nodes) ||
        !projection(Qk, 1, L, W, {0, 2, 3, 1}, Heads, Nodes))
      return;
    if (!Values.is(arg(Scale, 1), std::sqrt(static_cast<double>(W / Heads)))) return;

    // Nothing outside the kernel may read what it computes inside.
    std::set<int> Group(Nodes.begin(), Nodes.end());
    if (Group.size() != Nodes.size()) return;
    for (int X : Nodes)
      if (X != OutRs && !readOnlyBy(out(X), Group)) return;
    int Anchor = *Group.begin(); // the first in graph order
    Nodes.erase(std::find(Nodes.begin(), Nodes.end(), Anchor));
    group(Anchor, Nodes, "Attention");
    // The mask chain, from the first Unsqueeze to the Mul.
    std::vector<int> Chain = {Up1, Up};
    if (int C = parent(MaskSub, 1); C != Up) Chain.push_back(C);
    Chain.insert(Chain.end(), {MaskSub, MaskMul});
    MaskChains.push_back(Chain);
  }

  /// AttentionFusionHelper::SetMaskNodesToRemove: once every reader of a
  /// mask chain's Mul is a fused Attention, ORT removes the chain and feeds
  /// the mask to the Attentions through one Cast to int32 (shared by the
  /// layers). Priced as one kernel anchored on the first Unsqueeze.
  void matchMaskChains() {
    for (const std::vector<int> &Chain : MaskChains) {
      int Mul = Chain.back();
      bool AllFused = std::all_of(Chain.begin(), Chain.end(), [&](int X) { return free(X); });
      auto Readers = Consumers.find(out(Mul));
      if (!AllFused || GraphOutputs.count(out(Mul)) || Readers == Consumers.end()) continue;
      for (int U : Readers->second) AllFused &= AnchorOf[U] >= 0 && kindOf(AnchorOf[U]) == "Attention";
      if (AllFused) group(Chain.front(), std::vector<int>(Chain.begin() + 1, Chain.end()), "AttentionMask");
    }
  }

  /// attention_fusion_helper.h, MatchGemmSubgraph: Reshape -> Gemm ->
  /// Reshape ending at node Last; the Gemm's weight W x Cols and bias Cols
  /// are constant. Returns {first Reshape, Gemm} or {-1, -1}.
  std::pair<int, int> gemmSubgraph(int Last, int64_t W, int64_t Cols) const {
    int G = parent(Last, 0), First = parent(G, 0);
    if (!is(Last, "Reshape") || !is(G, "Gemm") || !is(First, "Reshape") || node(G).input_size() != 3)
      return {-1, -1};
    if (intAttr(G, "transA").value_or(0) || intAttr(G, "transB").value_or(0)) return {-1, -1};
    if (!constantOfDims(arg(G, 1), {W, Cols}) || !constantOfDims(arg(G, 2), {Cols})) return {-1, -1};
    return {First, G};
  }
  bool is(int X, const char *Op) const { return X >= 0 && node(X).op_type() == Op && onnxDomain(node(X)); }
  /// Whether every reader of T other than the nodes in Group is folded (a
  /// folded Shape does not read the tensor when the graph runs).
  bool readOnlyByOrFolded(const std::string &T, const std::set<int> &Group) const {
    if (GraphOutputs.count(T)) return false;
    auto C = Consumers.find(T);
    if (C == Consumers.end()) return false;
    for (int U : C->second)
      if (!Group.count(U) && Sum.marks[U] != "folded") return false;
    return true;
  }

  /// attention_fusion_helper.h, FuseGptAttention without past state or an
  /// input mask (GPT-2 exports): LN (input from an Add A0; read by one
  /// Reshape and otherwise only by Shapes) -> Reshape -> Gemm(W x 3W) ->
  /// Reshape -> Split into q, k, v, each -> Reshape -> Transpose (k as
  /// 0,2,3,1); MatMul(q, k) -> Div(scalar constant) -> Where(constant causal
  /// mask, ., scalar constant) -> Softmax -> MatMul(., v) ->
  /// Transpose(0,2,1,3) -> Reshape -> Reshape -> Gemm(W x W) -> Reshape ->
  /// the Add that also reads A0. Everything from the first Reshape to the
  /// Reshape before the output Gemm is one Attention kernel, anchored on the
  /// QKV Gemm; the causal-mask arithmetic is constant once the dims are
  /// bound, so it is folded. ORT 1.30 fuses GPT-2 whatever the Div's and the
  /// Where's constants are (Cost/ort-fusions-match-ort.test changes both), so
  /// their values are not checked here. Looser than ORT: the shape arithmetic
  /// around the Gemms (MatchGemmSubgraph) is folded and not matched.
  void matchGptAttention(int I) {
    int64_t W = 0;
    const std::vector<int> *Users = attentionRoot(I, W);
    if (!Users) return;
    const std::string &L = out(I);
    int Reshapes = 0, Shapes = 0;
    for (int U : *Users) Reshapes += is(U, "Reshape"), Shapes += is(U, "Shape");
    if (Reshapes != 1 || (Shapes != 1 && Shapes != 3) || Reshapes + Shapes != static_cast<int>(Users->size()))
      return;
    int A0 = producer(arg(I, 0)), After = -1;
    if (!is(A0, "Add")) return;
    for (int U : Consumers.at(out(A0)))
      if (is(U, "Add")) {
        After = U;
        break;
      }
    if (After < 0) return;
    auto [OutFirst, OutGemm] = gemmSubgraph(parent(After, 1), W, W);
    if (OutFirst < 0) return;
    int Merge = parent(OutFirst, 0), Tr = parent(Merge, 0), Qkv = parent(Tr, 0);
    if (!isOp(Merge, "Reshape") || !isOp(Tr, "Transpose") || perm(Tr) != std::vector<int64_t>{0, 2, 1, 3} ||
        !isOp(Qkv, "MatMul"))
      return;
    std::vector<int> Nodes = {Merge, Tr, Qkv};
    int SplitN = -1;
    auto head = [&](int Tip, int Slot, int Output, const std::vector<int64_t> &Perm) {
      int T = parent(Tip, Slot), R = parent(T, 0), S = parent(R, 0);
      if (!isOp(T, "Transpose") || perm(T) != Perm || !isOp(R, "Reshape") || !isOp(S, "Split") ||
          node(S).output_size() != 3 || arg(R, 0) != node(S).output(Output) || (SplitN >= 0 && S != SplitN))
        return false;
      SplitN = S;
      Nodes.insert(Nodes.end(), {R, T});
      return true;
    };
    if (!head(Qkv, 1, 2, {0, 2, 1, 3})) return;
    int Soft = parent(Qkv, 0), Mask = parent(Soft, 0), Scale = parent(Mask, 1), Qk = parent(Scale, 0);
    if (!isOp(Soft, "Softmax") || !isOp(Mask, "Where") || !isOp(Scale, "Div") || !isOp(Qk, "MatMul")) return;
    if (!constant(arg(Mask, 0)) || !Values.scalar(arg(Mask, 2)) || !Values.scalar(arg(Scale, 1))) return;
    Nodes.insert(Nodes.end(), {Soft, Mask, Scale, Qk});
    if (!head(Qk, 0, 0, {0, 2, 1, 3}) || !head(Qk, 1, 1, {0, 2, 3, 1})) return;
    auto [InFirst, InGemm] = gemmSubgraph(parent(SplitN, 0), W, 3 * W);
    if (InFirst < 0 || arg(InFirst, 0) != L) return;
    Nodes.insert(Nodes.end(), {SplitN, parent(SplitN, 0), InGemm, InFirst});
    std::set<int> Group(Nodes.begin(), Nodes.end());
    if (Group.size() != Nodes.size()) return;
    for (int X : Nodes) {
      if (!free(X)) return;
      for (const std::string &O : node(X).output())
        if (X != Merge && !O.empty() && !readOnlyByOrFolded(O, Group)) return;
    }
    Nodes.erase(std::find(Nodes.begin(), Nodes.end(), InGemm));
    group(InGemm, Nodes, "Attention");
  }

  /// A rank-3 tensor of known dims (the operands skip_layer_norm_fusion.cc
  /// accepts), or nullptr.
  const TensorInfo *rank3(const std::string &T) const {
    const TensorInfo *I = info(T);
    if (!I || !I->hasShape || I->dims.size() != 3) return nullptr;
    for (int64_t D : I->dims)
      if (D <= 0) return nullptr;
    return I;
  }

  /// skip_layer_norm_fusion.cc: LayerNormalization (an ONNX node, or one
  /// fused above) whose input is Add1(a, b) of two 3-D tensors of the same
  /// shape read only by it (format 3); Add1 may take one operand from
  /// Add2(c, bias) with a constant 1-D bias of the last dim, read only by
  /// Add1, in its first slot (format 1) or second slot (format 2).
  void matchSkipLayerNorm(int Ln) {
    std::set<int> LnNodes;
    if (isOp(Ln, "LayerNormalization")) LnNodes = {Ln};
    else if (Ln >= 0 && AnchorOf[Ln] == Ln && kindOf(Ln) == "LayerNormalization")
      LnNodes.insert(Sum.groups[Ln].begin(), Sum.groups[Ln].end());
    else return;
    const std::string &X = arg(Ln, 0);
    int Add1 = producer(X);
    if (!isOp(Add1, "Add") || node(Add1).input_size() != 2 || !readOnlyBy(X, LnNodes)) return;
    const TensorInfo *A = rank3(arg(Add1, 0)), *B = rank3(arg(Add1, 1));
    if (!A || !B || A->dims != B->dims) return;
    std::vector<int> Members;
    for (int Slot = 0; Slot < 2 && Members.empty(); ++Slot) { // format 1, then format 2
      int Add2 = parent(Add1, Slot);
      if (!isOp(Add2, "Add") || node(Add2).input_size() != 2 || !readOnlyBy(out(Add2), {Add1})) continue;
      const TensorInfo *In = rank3(arg(Add2, 0)), *Bias = info(arg(Add2, 1));
      if (In && Bias && constant(arg(Add2, 1)) && Bias->hasShape && Bias->dims.size() == 1 &&
          Bias->dims[0] == In->dims[2])
        Members.push_back(Add2);
    }
    Members.push_back(Add1);
    groupOrExtend(Ln, Members, "SkipLayerNormalization");
  }

  bool activation(int I) const {
    static const std::unordered_set<std::string> Acts = {"Relu", "LeakyRelu", "Sigmoid",
                                                         "Tanh", "Clip",      "HardSigmoid"};
    return free(I) && onnxDomain(node(I)) && Acts.count(node(I).op_type());
  }

  /// conv_bn_fusion.cc, conv_add_fusion.cc, conv_mul_fusion.cc (constant
  /// operands folded into the weights), then conv_activation_fusion.cc.
  void matchConv(int ConvN) {
    if (!isOp(ConvN, "Conv") || node(ConvN).input_size() < 2 || !constant(arg(ConvN, 1))) return;
    std::vector<int> Members;
    std::string Kind = "Conv";
    int Cur = ConvN;
    while (true) {
      int Next = soleConsumer(Cur);
      if (isOp(Next, "BatchNormalization") && node(Next).output_size() >= 1) {
        bool Const = true;
        for (int K = 1; K < node(Next).input_size(); ++K) Const &= constant(node(Next).input(K));
        if (!Const) break;
        Kind += "+BatchNormalization";
      } else if ((isOp(Next, "Add") || isOp(Next, "Mul")) && constant(otherInput(Next, Cur))) {
        Kind += "+" + node(Next).op_type();
      } else {
        break;
      }
      Members.push_back(Next);
      Cur = Next;
    }
    if (int Act = soleConsumer(Cur); activation(Act)) {
      Members.push_back(Act);
      Kind += "+" + node(Act).op_type();
    }
    if (!Members.empty()) group(ConvN, Members, Kind);
  }

  /// Whether ORT sees every shape static: the model has no symbolic dims.
  bool staticModel() const { return M.dimBindings.empty() && M.unboundDims.empty(); }

  /// matmul_add_fusion.cc (MatMul plus a constant bias -> Gemm; an N-D
  /// input of a static model through Reshapes, which are views), then
  /// gemm_activation_fusion.cc.
  void matchMatMulOrGemm(int I) {
    std::vector<int> Members;
    std::string Kind;
    int Cur = I;
    if (isOp(I, "MatMul")) {
      const TensorInfo *A = M.tensor(arg(I, 0));
      const TensorInfo *B = node(I).input_size() > 1 ? M.tensor(arg(I, 1)) : nullptr;
      int AddN = soleConsumer(I);
      if (!A || !B || B->dims.size() != 2 || !isOp(AddN, "Add")) return;
      std::string Bias = otherInput(AddN, I);
      const TensorInfo *BI = M.tensor(Bias);
      if (!constant(Bias) || !BI || BI->dims.empty() || BI->dims.size() > 2) return;
      // An N-D input is reshaped to 2-D around the Gemm, which ORT does
      // only when the input's shape is static in the model it loads (not
      // after our --dim bindings) and the bias is 1-D.
      if (A->dims.size() != 2 && (!staticModel() || !A->fullyKnown() || !B->fullyKnown() ||
                                  BI->dims.size() != 1 || BI->dims[0] != B->dims[1]))
        return;
      Members.push_back(AddN);
      Kind = "MatMul+Add";
      Cur = AddN;
    } else if (isOp(I, "Gemm")) {
      Kind = "Gemm";
    } else {
      return;
    }
    if (int Act = soleConsumer(Cur); activation(Act)) {
      Members.push_back(Act);
      Kind += "+" + node(Act).op_type();
    }
    if (!Members.empty()) group(I, Members, Kind);
  }
};

/// Bytes of a tensor by name (0 when unknown).
double tensorBytes(const OnnxModel &M, const std::string &T) {
  const TensorInfo *I = M.tensor(T);
  std::optional<double> B = I ? I->bytes() : std::nullopt;
  return B ? *B : 0;
}

} // namespace

OrtOptimizationSummary onnxp::findOrtOptimizations(const CostGraph &G, const OnnxModel &M) {
  return Matcher(G, M).run();
}

OrtOptimizationSummary onnxp::applyOrtOptimizations(CostGraph &G, const OnnxModel &M, const Platform &P) {
  OrtOptimizationSummary S = findOrtOptimizations(G, M);
  const onnx::GraphProto &OG = M.graph();
  std::unordered_map<std::string, std::vector<int>> Consumers;
  for (int I = 0; I < OG.node_size(); ++I)
    for (const std::string &In : OG.node(I).input())
      if (!In.empty()) Consumers[In].push_back(I);
  // A group with a member that a measurement priced stays unfused.
  std::map<int, std::vector<int>> &Groups = S.groups;
  for (auto It = Groups.begin(); It != Groups.end();) {
    bool Measured = false;
    for (int X : It->second) Measured |= G.node(X).costSource.rfind("analytical", 0) != 0;
    if (!Measured) {
      ++It;
      continue;
    }
    for (int X : It->second) S.marks[X].clear();
    It = Groups.erase(It);
  }
  // Recount fusions from the groups that remain.
  S.fusions.clear();
  S.fusedNodes = 0;
  for (auto &[A, Members] : Groups) {
    ++S.fusions[S.marks[A].substr(7)];
    S.fusedNodes += Members.size() - 1;
  }

  for (auto &[A, Members] : Groups) {
    std::unordered_set<int> In(Members.begin(), Members.end());
    std::unordered_set<std::string> Produced;
    for (int X : Members)
      for (const std::string &O : OG.node(X).output()) Produced.insert(O);
    OpWork W;
    std::unordered_set<std::string> Read, Written;
    for (int X : Members) {
      // Operands folded into the weights (Conv+BN/Add/Mul) cost no FLOPs.
      const std::string &Op = G.node(X).op;
      bool FoldedIntoWeights =
          X != A && G.node(A).op == "Conv" && (Op == "BatchNormalization" || Op == "Add" || Op == "Mul");
      if (!FoldedIntoWeights) W.flops += G.node(X).flops;
      for (const std::string &T : OG.node(X).input())
        if (!T.empty() && !Produced.count(T) && Read.insert(T).second) W.bytesRead += tensorBytes(M, T);
      for (const std::string &T : OG.node(X).output()) {
        if (T.empty()) continue;
        bool Outside = false;
        if (auto C = Consumers.find(T); C != Consumers.end())
          for (int U : C->second) Outside |= !In.count(U);
        for (const auto &O : OG.output()) Outside |= O.name() == T;
        if (Outside && Written.insert(T).second) W.bytesWritten += tensorBytes(M, T);
      }
    }
    CostNode &Anchor = G.node(A);
    // A fused kernel is priced as its anchor's kind (Conv for Conv+BN+Relu).
    Anchor.accTime = rooflineMs(W, P.accelerator, Anchor.op);
    Anchor.cpuTime = rooflineMs(W, P.cpu, Anchor.op);
    Anchor.flops = W.flops;
    Anchor.bytesAccessed = W.bytes();
    for (int X : Members) {
      if (X == A) continue;
      CostNode &N = G.node(X);
      N.accTime = N.cpuTime = N.flops = N.bytesAccessed = 0;
      N.costSource = "fused";
    }
  }
  for (size_t V = 0; V < S.marks.size(); ++V) {
    if (S.marks[V] != "folded") continue;
    CostNode &N = G.node(static_cast<int>(V));
    N.accTime = N.cpuTime = N.flops = N.bytesAccessed = 0;
    N.costSource = "folded";
  }
  // Backward twins of folded nodes: the gradient of a constant is never computed.
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(static_cast<int>(V));
    if (N.isBackward() && N.partner >= 0 && static_cast<size_t>(N.partner) < S.marks.size() &&
        S.marks[N.partner] == "folded") {
      N.accTime = N.cpuTime = N.flops = N.bytesAccessed = 0;
      N.costSource = "folded";
    }
  }
  return S;
}
