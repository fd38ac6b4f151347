//===- Partition/SyntheticGraphs.cpp - Generated cost graphs --------------===//
//
// The generators of SyntheticGraphs.h. They use std::mt19937 with explicit
// integer-to-real mapping (not std::uniform_real_distribution, whose output
// is implementation-defined) so the graphs are identical across standard
// libraries.
//
//===----------------------------------------------------------------------===//
#include "SyntheticGraphs.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace onnxp;

namespace {
class Rng {
public:
  explicit Rng(unsigned Seed) : Gen(Seed) {}
  /// Uniform in [0, 1).
  double unit() { return (Gen() >> 8) * (1.0 / 16777216.0); }
  double uniform(double Lo, double Hi) { return Lo + (Hi - Lo) * unit(); }
  /// Uniform integer in [Lo, Hi].
  int integer(int Lo, int Hi) { return Lo + static_cast<int>(Gen() % (Hi - Lo + 1)); }

private:
  std::mt19937 Gen;
};

struct Builder {
  CostGraph G;
  double LinkBytesPerMs;
  int node(std::string Name, Role R, double Acc, double CpuFactor, double Out, double Param) {
    CostNode N;
    N.name = std::move(Name);
    N.role = R;
    N.accTime = Acc;
    N.cpuTime = Acc * CpuFactor;
    N.outputBytes = Out;
    N.paramBytes = Param;
    N.memBytes = std::max(Out, Param);
    N.costSource = "synthetic";
    return G.addNode(std::move(N));
  }
  void edge(int Src, int Dst) {
    CostEdge E;
    E.src = Src;
    E.dst = Dst;
    E.bytes = G.node(Src).outputBytes;
    E.commTime = E.bytes / LinkBytesPerMs;
    G.addEdge(E);
  }
};
} // namespace

CostGraph onnxp::makeTrainingGraph(const TrainingGraphOptions &O) {
  Rng R(O.seed);
  Builder B;
  B.LinkBytesPerMs = O.linkBytesPerMs;
  auto Time = [&] { return O.meanTime * R.uniform(0.2, 1.8); };
  auto Act = [&] { return O.activationBytes * R.uniform(0.5, 1.5); };
  const int W = std::max(1, O.maxWidth);
  // Nodes per layer: join + w branches + w params (forward), join' + w
  // branches' + a gradient sum when w > 1 (backward), w optimizers:
  // 2 + 4w + [w > 1], on average 2 + 2(W + 1) + (W - 1) / W.
  const double PerLayer = 2 + 2.0 * (W + 1) + (W - 1.0) / W;
  const size_t Layers = std::max<size_t>(1, static_cast<size_t>(O.nodes / PerLayer));

  struct Branch {
    int fw, param;
  };
  std::vector<int> Join;                     // forward join per layer
  std::vector<std::vector<Branch>> Branches; // per layer
  std::vector<std::vector<int>> JoinInputs;  // layers whose join feeds this join by a skip
  int Input = B.node("input", Role::Forward, 0.1 * O.meanTime, O.cpuSlowdown, Act(), 0);
  int Prev = Input;
  for (size_t L = 0; L < Layers; ++L) {
    std::string P = "l" + std::to_string(L);
    int Width = R.integer(1, W);
    std::vector<Branch> Br;
    double Out = Act();
    for (int I = 0; I < Width; ++I) {
      std::string Q = P + ".b" + std::to_string(I);
      double PB = O.paramBytes * R.uniform(0.25, 1.75);
      int Param = B.node(Q + ".w", Role::Forward, 0.01 * O.meanTime, 1, PB, PB);
      int Op = B.node(Q, Role::Forward, Time(), O.cpuSlowdown, Out, 0);
      B.edge(Prev, Op);
      B.edge(Param, Op);
      Br.push_back({Op, Param});
    }
    int J = B.node(P + ".add", Role::Forward, 0.2 * Time(), O.cpuSlowdown, Out, 0);
    for (const Branch &X : Br) B.edge(X.fw, J);
    std::vector<int> Extra;
    if (L >= 2 && R.unit() < O.skipProbability) {
      int Back = R.integer(2, std::max(2, O.maxSkip));
      if (static_cast<size_t>(Back) <= L) {
        Extra.push_back(static_cast<int>(L - Back));
        B.edge(Join[L - Back], J);
      }
    }
    Join.push_back(J);
    Branches.push_back(std::move(Br));
    JoinInputs.push_back(std::move(Extra));
    Prev = J;
  }
  int Loss = B.node("loss", Role::Loss, Time(), O.cpuSlowdown, O.activationBytes * 0.01, 0);
  B.edge(Prev, Loss);

  // Backward: the gradient of every forward value flows against its edges.
  // GradOf[join L] collects the gradient of the join's output.
  std::vector<int> JoinGrad(Layers, -1);
  auto Backward = [&](int Fw, const std::string &Name, double Scale) {
    const double Out = B.G.node(Fw).outputBytes, Acc = B.G.node(Fw).accTime;
    int Bw = B.node(Name, Role::Backward, Scale * Acc, O.cpuSlowdown, Out, 0);
    B.G.node(Bw).partner = Fw;
    B.edge(Fw, Bw); // saved activation
    return Bw;
  };
  std::vector<std::vector<int>> SkipGradConsumers(Layers);
  int Upstream = Loss;
  for (size_t L = Layers; L-- > 0;) {
    std::string P = "l" + std::to_string(L);
    int JG = Backward(Join[L], P + ".add.grad", 1.0);
    B.edge(Upstream, JG);
    for (int C : SkipGradConsumers[L]) B.edge(C, JG);
    JoinGrad[L] = JG;
    // The gradient leaving this layer towards layer L-1 sums the branches.
    int Sum = -1;
    std::vector<int> BranchGrads;
    for (size_t I = 0; I < Branches[L].size(); ++I) {
      const Branch &X = Branches[L][I];
      std::string Q = P + ".b" + std::to_string(I);
      int BG = Backward(X.fw, Q + ".grad", 2.0);
      B.edge(JG, BG);
      B.edge(X.param, BG);
      int Opt = B.node(Q + ".update", Role::Optimizer, 0.1 * O.meanTime, O.cpuSlowdown, 0, 0);
      B.G.node(Opt).memBytes = B.G.node(X.param).paramBytes; // optimizer state
      B.edge(BG, Opt);
      B.edge(X.param, Opt);
      B.G.node(Opt).colocClass = B.G.node(X.param).colocClass = static_cast<int>(X.param);
      BranchGrads.push_back(BG);
    }
    if (BranchGrads.size() == 1) {
      Sum = BranchGrads.front();
    } else {
      Sum = B.node(P + ".sum.grad", Role::Backward, 0.2 * Time(), O.cpuSlowdown,
                   B.G.node(Join[L]).outputBytes, 0);
      for (int BG : BranchGrads) B.edge(BG, Sum);
    }
    // The skip edge into join L carries gradient to the earlier join too.
    for (int Src : JoinInputs[L]) SkipGradConsumers[Src].push_back(JG);
    Upstream = Sum;
  }
  int InputGrad = B.node("input.grad", Role::Backward, 0.1 * O.meanTime, O.cpuSlowdown, 0, 0);
  B.edge(Upstream, InputGrad);
  B.G.sourceName = "synthetic-training";
  B.G.normalizeClasses();
  return std::move(B.G);
}

CostGraph onnxp::makeRandomDag(const RandomDagOptions &O) {
  Rng R(O.seed);
  CostGraph G;
  for (size_t V = 0; V < O.nodes; ++V) {
    CostNode N;
    N.name = "n" + std::to_string(V);
    N.accTime = R.integer(1, std::max(1, static_cast<int>(O.maxTime)));
    N.cpuTime = 4 * N.accTime;
    N.memBytes = R.integer(0, static_cast<int>(O.maxBytes));
    N.outputBytes = N.memBytes;
    if (R.unit() < O.residualProbability) N.paramBytes = N.memBytes;
    if (V > 0 && R.unit() < O.colocPairProbability) {
      int Other = R.integer(0, static_cast<int>(V) - 1);
      if (G.node(Other).colocClass < 0) G.node(Other).colocClass = Other;
      N.colocClass = G.node(Other).colocClass;
    }
    G.addNode(std::move(N));
    if (V == 0) continue;
    int In = R.integer(V == 0 ? 0 : 1, O.maxInDegree);
    std::vector<int> Preds;
    for (int I = 0; I < In; ++I) Preds.push_back(R.integer(0, static_cast<int>(V) - 1));
    std::sort(Preds.begin(), Preds.end());
    Preds.erase(std::unique(Preds.begin(), Preds.end()), Preds.end());
    for (int P : Preds) {
      CostEdge E;
      E.src = P;
      E.dst = static_cast<int>(V);
      E.commTime = R.integer(0, static_cast<int>(O.maxComm));
      E.bytes = G.node(P).outputBytes;
      G.addEdge(E);
    }
  }
  G.sourceName = "random-dag";
  G.normalizeClasses();
  return G;
}
