//===- Analysis/TrainingGraph.cpp - ONNX Runtime training conventions ---===//
//
// Classification is by ONNX Runtime's gradient-builder conventions
// (models/README.md), which is what the graphs actually carry: the
// `_Grad/` name scope marks a backward node and names its forward partner.
// Nodes outside any such scope keep the forward role even when they sit
// after the loss (ORT's `AccumulateGrad_*` Sum nodes): they have no forward
// partner, are few and tiny, and the DP's App. B preprocessing handles them
// like any forward node.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/TrainingGraph.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

bool onnxp::isOptimizerOp(const std::string &Domain, const std::string &Op) {
  static const std::set<std::string> Ops = {"InPlaceAccumulator",
                                            "InPlaceAccumulatorV2",
                                            "AdamOptimizer",
                                            "AdamWOptimizer",
                                            "SGDOptimizer",
                                            "SGDOptimizerV2",
                                            "LambOptimizer",
                                            "ZeroGradient",
                                            "GradientAccumulator",
                                            "MomentumOptimizer",
                                            "Adagrad",
                                            "Adam",
                                            "Momentum"};
  (void)Domain;
  return Ops.count(Op) > 0;
}

bool onnxp::isLossOp(const std::string &Op) {
  static const std::set<std::string> Ops = {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss",
                                            "SoftmaxCrossEntropy",     "SparseSoftmaxCrossEntropy",
                                            "BinaryCrossEntropy",      "MSELoss",
                                            "MeanSquaredError"};
  return Ops.count(Op) > 0;
}

namespace {
bool endsWith(const std::string &S, const std::string &Suffix) {
  return S.size() >= Suffix.size() && S.compare(S.size() - Suffix.size(), Suffix.size(), Suffix) == 0;
}

/// Ops whose input slots >= 1 hold weights.
bool hasWeightSlots(const std::string &Op) {
  static const std::set<std::string> Ops = {"Conv",
                                            "ConvTranspose",
                                            "Gemm",
                                            "BatchNormalization",
                                            "LayerNormalization",
                                            "InstanceNormalization",
                                            "GroupNormalization",
                                            "LSTM",
                                            "GRU",
                                            "RNN",
                                            "PRelu",
                                            "SkipLayerNormalization",
                                            "EmbedLayerNormalization",
                                            "Attention"};
  return Ops.count(Op) > 0;
}

struct UnionFind {
  std::vector<int> Parent;
  explicit UnionFind(size_t N) : Parent(N) { std::iota(Parent.begin(), Parent.end(), 0); }
  int find(int X) { return Parent[X] == X ? X : Parent[X] = find(Parent[X]); }
  void unite(int A, int B) {
    A = find(A);
    B = find(B);
    if (A != B) Parent[std::max(A, B)] = std::min(A, B);
  }
};
} // namespace

std::vector<ParameterInfo> onnxp::findParameters(const OnnxModel &M) {
  const onnx::GraphProto &G = M.graph();
  // Issue 38: the passes call this several times on graphs of 10^5 nodes,
  // so the sets hold what is asked of them -- the initializers and graph
  // inputs (views into M's names, which outlive the call) and the
  // gradient names' stems -- and each node input is hashed once.
  // An ORT training graph names a trained tensor's gradient X_grad (or its
  // accumulation buffer X_grad.accumulation.buffer): X's stem.
  static constexpr std::string_view GradSuffixes[] = {"_grad", "_grad.accumulation.buffer"};
  std::unordered_set<std::string_view> GradStems;
  auto AddStem = [&](std::string_view Name) {
    for (std::string_view Suffix : GradSuffixes)
      if (Name.size() >= Suffix.size() && Name.substr(Name.size() - Suffix.size()) == Suffix)
        GradStems.insert(Name.substr(0, Name.size() - Suffix.size()));
  };
  for (const auto &I : G.input()) AddStem(I.name());
  for (const auto &N : G.node())
    for (const std::string &O : N.output()) AddStem(O);

  // Initializers read by a forward op; graph inputs read at a weight slot of one.
  enum : char { IsInitializer = 1, IsInput = 2, ReadByForward = 4, AtWeightSlot = 8 };
  std::unordered_map<std::string_view, char> Flags;
  for (const auto &I : G.initializer()) Flags[I.name()] |= IsInitializer;
  for (const auto &I : G.input()) Flags[I.name()] |= IsInput;
  for (const auto &N : G.node()) {
    bool Backward = N.name().find("_Grad/") != std::string::npos;
    if (Backward || isOptimizerOp(N.domain(), N.op_type())) continue;
    const bool WeightSlots = hasWeightSlots(N.op_type());
    for (int S = 0; S < N.input_size(); ++S) {
      auto It = Flags.find(N.input(S));
      if (It == Flags.end()) continue;
      It->second |= ReadByForward;
      if (S >= 1 && WeightSlots) It->second |= AtWeightSlot;
    }
  }
  auto Has = [&](const std::string &Name, char Flag) {
    auto It = Flags.find(Name);
    return It != Flags.end() && (It->second & Flag);
  };
  auto Trainable = [&](const std::string &Name) { return GradStems.count(Name) > 0; };
  auto BytesOf = [&](const std::string &Name) {
    const TensorInfo *T = M.tensor(Name);
    std::optional<double> B = T ? T->bytes() : std::nullopt;
    return B ? *B : 0.0;
  };
  std::vector<ParameterInfo> Params;
  std::unordered_set<std::string_view> Seen;
  for (const auto &I : G.initializer()) {
    const bool IsTrainable = Trainable(I.name());
    if (!Has(I.name(), ReadByForward) && !IsTrainable) continue;
    bool Float = I.data_type() == onnx::TensorProto::FLOAT || I.data_type() == onnx::TensorProto::FLOAT16 ||
                 I.data_type() == onnx::TensorProto::BFLOAT16 || I.data_type() == onnx::TensorProto::DOUBLE;
    double Elems = 1;
    for (int64_t D : I.dims()) Elems *= static_cast<double>(D);
    // Scalars and integer tensors are constants (axes, shapes), not weights.
    if (!IsTrainable && (!Float || Elems <= 1)) continue;
    Params.push_back({I.name(), BytesOf(I.name()), IsTrainable, true});
    Seen.insert(I.name());
  }
  for (const auto &I : G.input()) {
    if (Seen.count(I.name())) continue;
    if (endsWith(I.name(), "_grad.accumulation.buffer")) continue; // optimizer state
    if (Trainable(I.name()) || Has(I.name(), AtWeightSlot))
      Params.push_back({I.name(), BytesOf(I.name()), Trainable(I.name()), false});
  }
  return Params;
}

namespace {
/// Roles from ONNX Runtime's conventions: optimizer ops, backward nodes in
/// a "<forward>_Grad/" scope (partnered with that forward node), the loss
/// (a loss op or a graph output named "loss"), the rest forward.
void assignRoles(CostGraph &G, const onnx::GraphProto &OG) {
  std::unordered_map<std::string, int> ByOnnxName;
  for (size_t V = 0; V < G.numNodes(); ++V)
    for (int O : G.node(V).onnxNodes) ByOnnxName.emplace(OG.node(O).name(), V);

  std::set<std::string> LossOutputs;
  for (const auto &O : OG.output())
    if (O.name().find("loss") != std::string::npos) LossOutputs.insert(O.name());

  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    if (N.onnxNodes.empty()) continue;
    const onnx::NodeProto &ON = OG.node(N.onnxNodes.front());
    size_t Scope = ON.name().find("_Grad/");
    if (isOptimizerOp(ON.domain(), ON.op_type())) {
      N.role = Role::Optimizer;
    } else if (Scope != std::string::npos) {
      N.role = Role::Backward;
      auto It = ByOnnxName.find(ON.name().substr(0, Scope));
      N.partner = It == ByOnnxName.end() ? -1 : It->second;
    } else {
      bool Loss = isLossOp(ON.op_type());
      for (const std::string &O : ON.output()) Loss |= LossOutputs.count(O) > 0;
      N.role = Loss ? Role::Loss : Role::Forward;
    }
  }
}

/// The colocation classes of a training graph (roles assigned): forward
/// and backward partners, a parameter's readers and optimizer, shared
/// parameters apart.
class Colocation {
public:
  Colocation(CostGraph &G, const OnnxModel &M) : G(G), OG(M.graph()), UF(G.numNodes()) {
    for (const ParameterInfo &P : findParameters(M)) {
      ParamNames.insert(P.name);
      ParamBytes[P.name] = P.bytes;
    }
    for (size_t V = 0; V < G.numNodes(); ++V) {
      if (!G.node(V).isForwardSide()) continue;
      std::set<std::string> Seen;
      for (int O : G.node(V).onnxNodes)
        for (const std::string &In : OG.node(O).input())
          if (ParamNames.count(In) && Seen.insert(In).second) ++ForwardReaderCount[In];
    }
  }

  /// Returns the number of classes with more than one node.
  size_t run(bool SplitStateless) {
    joinPartners(SplitStateless);
    G.sharedParameters.clear();
    std::map<std::string, std::vector<int>> Users = parameterUsers();
    // Issue 22, item 4: a parameter whose forward readers fall into several
    // classes (a tied embedding) is not forced onto one device; it becomes a
    // SharedParameter the planners may replicate (Partition/eval/TiedWeights.h).
    // Other parameters join their readers as before, first, so a parameter is
    // only shared when its readers are apart after every other constraint.
    std::vector<std::string> Candidates;
    for (auto &[P, Vs] : Users) {
      if (forwardReaders(Vs).size() >= 2) {
        Candidates.push_back(P);
        continue;
      }
      for (size_t I = 1; I < Vs.size(); ++I) UF.unite(Vs[0], Vs[I]);
    }
    const std::map<std::string, int> GradProducer = gradProducers();
    for (const std::string &P : Candidates) shareOrJoin(P, Users[P], GradProducer);
    // A deferred backward node that is no sink joins its partner after all.
    for (int B : Deferred)
      if (!Placed.count(B)) UF.unite(B, G.node(B).partner);
    return assignClasses();
  }

private:
  CostGraph &G;
  const onnx::GraphProto &OG;
  UnionFind UF;
  std::set<std::string> ParamNames;
  std::map<std::string, double> ParamBytes;
  std::map<std::string, int> ForwardReaderCount;
  std::vector<int> Deferred; ///< backward nodes whose partner derives a shared parameter
  std::set<int> Placed;      ///< deferred nodes that became sinks

  /// Seed 004 §3: a backward node joins its forward partner because they
  /// operate on the same weights. Opt-in: not when the partner reads none.
  bool stateless(int V) const {
    for (int O : G.node(V).onnxNodes)
      for (const std::string &In : OG.node(O).input())
        if (ParamNames.count(In)) return false;
    return true;
  }
  /// Issue 22: a forward node that reads only parameters (BLOOM's LM-head
  /// Transpose of the tied embedding) computes a weight-derived tensor. When
  /// it reads a parameter with several forward readers, its backward partner
  /// (the partial gradient's last step) is not joined to it yet: it may
  /// become a sink of that shared parameter below.
  bool paramOnly(int V) const {
    if (!G.node(V).isForwardSide() || G.node(V).onnxNodes.empty()) return false;
    for (int O : G.node(V).onnxNodes)
      for (const std::string &In : OG.node(O).input())
        if (!In.empty() && !ParamNames.count(In)) return false;
    return true;
  }
  bool derivesShared(int F) {
    if (!paramOnly(F)) return false;
    for (int O : G.node(F).onnxNodes)
      for (const std::string &In : OG.node(O).input())
        if (ForwardReaderCount[In] >= 2) return true;
    return false;
  }
  std::vector<int> forwardReaders(const std::vector<int> &Vs) const {
    std::vector<int> Out;
    for (int V : Vs)
      if (G.node(V).isForwardSide()) Out.push_back(V);
    return Out;
  }

  void joinPartners(bool SplitStateless) {
    for (size_t V = 0; V < G.numNodes(); ++V) {
      const int F = G.node(V).partner;
      if (F < 0 || (SplitStateless && stateless(F))) continue;
      if (G.node(V).isBackward() && derivesShared(F)) Deferred.push_back(static_cast<int>(V));
      else UF.unite(V, F);
    }
  }

  /// Parameter -> the nodes reading it, and the optimizer nodes reading its
  /// gradient.
  std::map<std::string, std::vector<int>> parameterUsers() const {
    std::map<std::string, std::vector<int>> Users;
    for (size_t V = 0; V < G.numNodes(); ++V)
      for (int O : G.node(V).onnxNodes)
        for (const std::string &In : OG.node(O).input()) {
          if (ParamNames.count(In)) Users[In].push_back(V);
          // An optimizer node reads P_grad.accumulation.buffer / P_grad: it
          // belongs with P's users.
          if (G.node(V).role == Role::Optimizer)
            for (const char *Suffix : {"_grad.accumulation.buffer", "_grad"})
              if (endsWith(In, Suffix)) {
                std::string P = In.substr(0, In.size() - std::strlen(Suffix));
                if (ParamNames.count(P)) Users[P].push_back(V);
              }
        }
    return Users;
  }

  /// P_grad -> the node producing it.
  std::map<std::string, int> gradProducers() const {
    std::map<std::string, int> GradProducer;
    for (size_t V = 0; V < G.numNodes(); ++V)
      for (int O : G.node(V).onnxNodes)
        for (const std::string &Out : OG.node(O).output())
          if (endsWith(Out, "_grad") && ParamNames.count(Out.substr(0, Out.size() - 5)))
            GradProducer[Out.substr(0, Out.size() - 5)] = static_cast<int>(V);
    return GradProducer;
  }

  /// Candidate P (several forward readers): a SharedParameter when its
  /// forward readers are in different classes, else its users join.
  void shareOrJoin(const std::string &P, const std::vector<int> &Vs,
                   const std::map<std::string, int> &GradProducer) {
    std::vector<int> Fw = forwardReaders(Vs);
    std::set<int> Roots;
    for (int V : Fw) Roots.insert(UF.find(V));
    if (Roots.size() < 2) {
      for (size_t I = 1; I < Vs.size(); ++I) UF.unite(Vs[0], Vs[I]);
      return;
    }
    SharedParameter SP;
    SP.name = P;
    SP.weightBytes = ParamBytes[P];
    for (int V : Vs) {
      if (G.node(V).role == Role::Optimizer) SP.sinks.push_back(V);
      else SP.readers.push_back(V);
    }
    // ORT's AccumulateGrad Sum of the partial gradients (forward role, no
    // partner): each copy sums its local partials.
    auto It = GradProducer.find(P);
    if (It != GradProducer.end() && G.node(It->second).op == "Sum") SP.sinks.push_back(It->second);
    // Weight-derived readers, and their backward partners when these only
    // feed the parameter's sinks (BLOOM: Transpose_Grad
    // into the AccumulateGrad Sum): each device holding a partial runs
    // its own copy.
    std::set<int> Readers(SP.readers.begin(), SP.readers.end());
    for (int V : SP.readers)
      if (paramOnly(V)) SP.derived.push_back(V);
    std::set<int> Sinks(SP.sinks.begin(), SP.sinks.end());
    for (int B : Deferred) {
      if (!std::count(SP.derived.begin(), SP.derived.end(), G.node(B).partner) || Readers.count(B)) continue;
      bool IntoSinks = !G.outEdges(B).empty();
      for (int EId : G.outEdges(B)) IntoSinks &= Sinks.count(G.edge(EId).dst) > 0;
      if (!IntoSinks) continue;
      SP.sinks.push_back(B);
      Placed.insert(B);
    }
    std::sort(SP.sinks.begin(), SP.sinks.end());
    SP.sinks.erase(std::unique(SP.sinks.begin(), SP.sinks.end()), SP.sinks.end());
    G.sharedParameters.push_back(std::move(SP));
  }

  size_t assignClasses() {
    std::map<int, int> Size;
    for (size_t V = 0; V < G.numNodes(); ++V) ++Size[UF.find(V)];
    size_t Multi = 0;
    for (size_t V = 0; V < G.numNodes(); ++V) {
      int Root = UF.find(V);
      G.node(V).colocClass = Root;
      if (Root == (int)V && Size[Root] > 1) ++Multi;
    }
    G.normalizeClasses();
    return Multi;
  }
};
} // namespace

size_t onnxp::classifyTrainingGraph(CostGraph &G, const OnnxModel &M, bool SplitStateless) {
  assignRoles(G, M.graph());
  return Colocation(G, M).run(SplitStateless);
}

size_t onnxp::deriveBackward(CostGraph &G) {
  const size_t NumForward = G.numNodes();
  const size_t NumForwardEdges = G.numEdges();
  G.normalizeClasses();
  std::vector<int> Twin(NumForward, -1);
  for (size_t V = 0; V < NumForward; ++V) {
    const CostNode &F = G.node(V);
    // Constants and shape queries have no gradient.
    if (F.role != Role::Forward || F.op == "Constant" || F.op == "Shape" || F.op == "Size") continue;
    CostNode B;
    B.name = F.name + "_Grad";
    B.op = F.op.empty() ? "Grad" : F.op + "Grad";
    B.domain = F.domain;
    B.role = Role::Backward;
    B.partner = static_cast<int>(V);
    B.colocClass = F.colocClass;
    B.outputBytes = F.outputBytes;
    B.onnxNodes = {}; // derived: no ONNX node of its own
    Twin[V] = G.addNode(std::move(B));
  }
  for (size_t EId = 0; EId < NumForwardEdges; ++EId) {
    const CostEdge E = G.edge(EId);
    if (Twin[E.src] < 0 || Twin[E.dst] < 0) continue;
    CostEdge M;
    M.src = Twin[E.dst];
    M.dst = Twin[E.src];
    M.tensor = E.tensor.empty() ? "" : E.tensor + "_grad";
    M.bytes = E.bytes;
    G.addEdge(std::move(M));
  }
  for (size_t V = 0; V < NumForward; ++V) {
    if (Twin[V] < 0) continue;
    CostEdge S;
    S.src = static_cast<int>(V);
    S.dst = Twin[V];
    S.tensor = "";
    S.bytes = G.node(V).outputBytes; // activations kept for the backward pass
    G.addEdge(std::move(S));
  }
  return G.numNodes() - NumForward;
}
