//===- Cost/OrtGraphOptimizations.cpp - Price the graph ORT executes ----===//
//
// The rules mirror onnxruntime/core/optimizer/ (graph_transformer_utils.cc
// lists which transformers run at which level): constant_folding.cc for
// folding, conv_bn_fusion.cc / conv_add_fusion.cc / conv_mul_fusion.cc,
// conv_activation_fusion.cc, matmul_add_fusion.cc, gemm_activation_fusion.cc,
// layer_norm_fusion.cc, gelu_fusion.cc and skip_layer_norm_fusion.cc for the
// fusions. Each matcher is conservative: when a condition ORT checks is not
// obviously met here (an intermediate with a second consumer, a non-constant
// weight), the nodes stay separate kernels.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/OrtGraphOptimizations.h"

#include "onnx-partition/Cost/Roofline.h"

#include <algorithm>
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
  Matcher(const CostGraph &G, const OnnxModel &M) : M(M), OG(M.graph()) {
    Sum.marks.assign(G.numNodes(), "");
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

  OrtOptimizationSummary run() {
    fold();
    for (int I = 0; I < OG.node_size(); ++I) matchLayerNorm(I);
    for (int I = 0; I < OG.node_size(); ++I) matchGelu(I);
    for (int I = 0; I < OG.node_size(); ++I) matchSkipLayerNorm(I);
    for (int I = 0; I < OG.node_size(); ++I) matchConv(I);
    for (int I = 0; I < OG.node_size(); ++I) matchMatMulOrGemm(I);
    return std::move(Sum);
  }

private:
  const OnnxModel &M;
  const onnx::GraphProto &OG;
  OrtOptimizationSummary Sum;
  std::vector<bool> Eligible;
  std::unordered_map<std::string, int> Producer;
  std::unordered_map<std::string, std::vector<int>> Consumers;
  std::unordered_set<std::string> GraphOutputs, Constants;

  bool free(int I) const { return I >= 0 && I < OG.node_size() && Eligible[I] && Sum.marks[I].empty(); }
  const onnx::NodeProto &node(int I) const { return OG.node(I); }
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
    std::vector<int> &Group = Sum.groups[Anchor];
    Group.push_back(Anchor);
    for (int X : Members) Sum.marks[X] = "fused:" + Kind, Group.push_back(X);
    Sum.fusedNodes += Members.size();
    ++Sum.fusions[Kind];
  }

  /// layer_norm_fusion.cc: ReduceMean(x) -> Sub(x, mean) -> Pow(., 2) ->
  /// ReduceMean -> Add(eps) -> Sqrt -> Div(sub, sqrt) -> Mul(scale) -> Add(bias).
  void matchLayerNorm(int Mean1) {
    if (!isOp(Mean1, "ReduceMean")) return;
    const std::string &X = node(Mean1).input(0);
    auto Users = Consumers.find(node(Mean1).output(0));
    if (Users == Consumers.end() || Users->second.size() != 1) return;
    int SubN = Users->second[0];
    if (!isOp(SubN, "Sub") || node(SubN).input(0) != X) return;
    auto SubUsers = Consumers.find(node(SubN).output(0));
    if (SubUsers == Consumers.end() || SubUsers->second.size() != 2) return;
    int PowN = -1, DivN = -1;
    for (int U : SubUsers->second) {
      if (isOp(U, "Pow")) PowN = U;
      else if (isOp(U, "Div")) DivN = U;
    }
    if (PowN < 0 || DivN < 0) return;
    int Mean2 = soleConsumer(PowN);
    if (!isOp(Mean2, "ReduceMean")) return;
    int AddEps = soleConsumer(Mean2);
    if (!isOp(AddEps, "Add")) return;
    int SqrtN = soleConsumer(AddEps);
    if (!isOp(SqrtN, "Sqrt") || soleConsumer(SqrtN) != DivN) return;
    std::vector<int> Members = {SubN, PowN, Mean2, AddEps, SqrtN, DivN};
    int Last = DivN;
    if (int MulN = soleConsumer(DivN); isOp(MulN, "Mul")) {
      Members.push_back(MulN);
      Last = MulN;
      if (int AddB = soleConsumer(MulN); isOp(AddB, "Add")) Members.push_back(AddB), Last = AddB;
    }
    (void)Last;
    group(Mean1, Members, "LayerNormalization");
  }

  /// gelu_fusion.cc: Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)
  /// (the 0.5 may multiply x first; Mul by 1/sqrt 2 in place of Div).
  void matchGelu(int ErfN) {
    if (!isOp(ErfN, "Erf")) return;
    auto P = Producer.find(node(ErfN).input(0));
    if (P == Producer.end()) return;
    int Scale = P->second;
    if (!(isOp(Scale, "Div") || isOp(Scale, "Mul")) || soleConsumer(Scale) != ErfN) return;
    const std::string &X = node(Scale).input(0);
    int AddN = soleConsumer(ErfN);
    if (!isOp(AddN, "Add")) return;
    int Mul1 = soleConsumer(AddN);
    if (!isOp(Mul1, "Mul")) return;
    std::vector<int> Members = {ErfN, AddN, Mul1};
    std::string Other = otherInput(Mul1, AddN);
    if (Other != X) { // x * 0.5 computed first: Mul(x, 0.5) feeds Mul1
      auto Q = Producer.find(Other);
      if (Q == Producer.end() || !isOp(Q->second, "Mul") || soleConsumer(Q->second) != Mul1) return;
      const onnx::NodeProto &Half = node(Q->second);
      if (Half.input(0) != X && Half.input(1) != X) return;
      Members.push_back(Q->second);
    } else if (int Mul2 = soleConsumer(Mul1); isOp(Mul2, "Mul")) {
      Members.push_back(Mul2);
    }
    group(Scale, Members, "Gelu");
  }

  /// skip_layer_norm_fusion.cc: Add(a, b) of two activations feeding only
  /// LayerNormalization.
  void matchSkipLayerNorm(int AddN) {
    if (!isOp(AddN, "Add") || node(AddN).input_size() != 2) return;
    if (constant(node(AddN).input(0)) || constant(node(AddN).input(1))) return;
    int LN = soleConsumer(AddN);
    if (!isOp(LN, "LayerNormalization")) return;
    group(LN, {AddN}, "SkipLayerNormalization");
  }

  bool activation(int I) const {
    static const std::unordered_set<std::string> Acts = {"Relu", "LeakyRelu", "Sigmoid",
                                                         "Tanh", "Clip",      "HardSigmoid"};
    return free(I) && onnxDomain(node(I)) && Acts.count(node(I).op_type());
  }

  /// conv_bn_fusion.cc, conv_add_fusion.cc, conv_mul_fusion.cc (constant
  /// operands folded into the weights), then conv_activation_fusion.cc.
  void matchConv(int ConvN) {
    if (!isOp(ConvN, "Conv") || node(ConvN).input_size() < 2 || !constant(node(ConvN).input(1))) return;
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

  /// matmul_add_fusion.cc (2-D MatMul plus a constant bias -> Gemm), then
  /// gemm_activation_fusion.cc.
  void matchMatMulOrGemm(int I) {
    std::vector<int> Members;
    std::string Kind;
    int Cur = I;
    if (isOp(I, "MatMul")) {
      const TensorInfo *A = M.tensor(node(I).input(0));
      const TensorInfo *B = node(I).input_size() > 1 ? M.tensor(node(I).input(1)) : nullptr;
      int AddN = soleConsumer(I);
      if (!A || !B || A->dims.size() != 2 || B->dims.size() != 2 || !isOp(AddN, "Add")) return;
      std::string Bias = otherInput(AddN, I);
      const TensorInfo *BI = M.tensor(Bias);
      if (!constant(Bias) || !BI || BI->dims.empty() || BI->dims.size() > 2) return;
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
