//===- unit/Partition/IpTestUtil.cpp - Random instances and oracles -------===//
//
// See IpTestUtil.h. The oracles enumerate placements per colocation class
// (max-load) or per node and slot (latency) and keep the best plan that the
// PlanValidator accepts.
//
//===----------------------------------------------------------------------===//
#include "IpTestUtil.h"

#include "onnx-partition/Partition/eval/LatencyEvaluator.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <map>

using namespace onnxp;

CostGraph iptest::randomDag(std::mt19937 &Rng, int N, double EdgeProb, bool NonUniform, bool Unsupported) {
  std::uniform_int_distribution<int> Time(1, 20), Comm(0, 8), Mem(1, 10);
  std::bernoulli_distribution Edge(EdgeProb), Off(0.15);
  CostGraph G;
  std::vector<double> Cost(N);
  for (int I = 0; I < N; ++I) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(I);
    Nd.accTime = Time(Rng);
    Nd.cpuTime = Nd.accTime * 2 + Time(Rng);
    Nd.memBytes = Mem(Rng);
    Nd.accSupported = !(Unsupported && Off(Rng));
    G.addNode(Nd);
    Cost[I] = Comm(Rng);
  }
  for (int I = 0; I < N; ++I)
    for (int J = I + 1; J < N; ++J)
      if (Edge(Rng)) {
        CostEdge E;
        E.src = I;
        E.dst = J;
        E.commTime = NonUniform ? Comm(Rng) : Cost[I];
        G.addEdge(E);
      }
  return G;
}

CostGraph iptest::randomTrainingGraph(std::mt19937 &Rng, int F, double EdgeProb) {
  std::uniform_int_distribution<int> Time(1, 20), Comm(0, 8), Mem(1, 10);
  std::bernoulli_distribution Edge(EdgeProb);
  CostGraph G;
  std::vector<double> Cost(2 * F + 1);
  for (int I = 0; I < 2 * F + 1; ++I) {
    CostNode Nd;
    bool Bw = I >= F;
    Nd.name = (Bw ? "b" : "f") + std::to_string(I);
    Nd.role = Bw ? Role::Backward : Role::Forward;
    if (I < 2 * F) Nd.colocClass = I % F;
    if (Bw && I < 2 * F) Nd.partner = I - F;
    Nd.accTime = Time(Rng);
    Nd.cpuTime = Nd.accTime * 2 + Time(Rng);
    Nd.memBytes = Mem(Rng);
    G.addNode(Nd);
    Cost[I] = Comm(Rng);
  }
  auto Add = [&](int U, int V) {
    CostEdge E;
    E.src = U;
    E.dst = V;
    E.commTime = Cost[U];
    G.addEdge(E);
  };
  std::vector<char> HasOut(F, 0);
  std::vector<std::pair<int, int>> Fw;
  for (int I = 0; I < F; ++I)
    for (int J = I + 1; J < F; ++J)
      if (Edge(Rng)) {
        Add(I, J);
        Fw.push_back({I, J});
        HasOut[I] = 1;
      }
  for (int I = 0; I < F; ++I)
    if (!HasOut[I]) Add(I, F + I); // forward sink feeds its own gradient
  for (auto It = Fw.rbegin(); It != Fw.rend(); ++It) Add(F + It->second, F + It->first);
  Add(F, 2 * F); // the orphan backward node consumes a gradient
  return G;
}

Platform iptest::makePlatform(int K, int L, double Memory) {
  Platform P;
  P.accelerators = K;
  P.cpus = L;
  P.accelerator.memoryBytes = Memory;
  return P;
}

double iptest::bruteForceMaxLoad(const CostGraph &G, const Platform &P, bool Contiguous) {
  const int N = static_cast<int>(G.numNodes()), D = P.numDevices();
  std::map<int, int> Dense;
  std::vector<int> ClassOf(N);
  for (int V = 0; V < N; ++V) ClassOf[V] = Dense.try_emplace(G.classOf(V), (int)Dense.size()).first->second;
  const int C = static_cast<int>(Dense.size());
  std::vector<int> Assign(C, 0);
  double Best = kInfinity;
  ValidationOptions VO;
  VO.requireContiguous = Contiguous;
  while (true) {
    Plan Pl;
    Pl.device.resize(N);
    for (int V = 0; V < N; ++V) Pl.device[V] = Assign[ClassOf[V]];
    if (!validatePlan(G, P, Pl, VO)) {
      Expected<Evaluation> Ev = evaluatePlan(G, P, Pl);
      if (Ev) Best = std::min(Best, Ev->objective);
    }
    int I = 0;
    while (I < C && ++Assign[I] == D) Assign[I++] = 0;
    if (I == C) break;
  }
  return Best;
}

double iptest::bruteForceLatency(const CostGraph &G, const Platform &P, int Q) {
  const int N = static_cast<int>(G.numNodes());
  const int Slots = P.accelerators * Q + (P.cpus > 0 ? 1 : 0);
  std::vector<int> Assign(N, 0);
  double Best = kInfinity;
  while (true) {
    Plan Pl;
    Pl.device.resize(N);
    Pl.stage.assign(N, 0);
    for (int V = 0; V < N; ++V) {
      if (Assign[V] < P.accelerators * Q) {
        Pl.device[V] = Assign[V] / Q;
        Pl.stage[V] = Assign[V] % Q;
      } else {
        Pl.device[V] = P.accelerators;
      }
    }
    if (!validatePlan(G, P, Pl)) {
      Expected<double> L = evaluateLatency(G, P, Pl);
      if (L) Best = std::min(Best, *L);
    }
    int I = 0;
    while (I < N && ++Assign[I] == Slots) Assign[I++] = 0;
    if (I == N) break;
  }
  return Best;
}

Plan iptest::randomValidPlan(std::mt19937 &Rng, const CostGraph &G, const Platform &P, bool Contiguous) {
  const int N = static_cast<int>(G.numNodes());
  std::uniform_int_distribution<int> Dev(0, P.numDevices() - 1);
  ValidationOptions VO;
  VO.requireContiguous = Contiguous;
  for (int Try = 0; Try < 500; ++Try) {
    std::map<int, int> ClassDev;
    Plan Pl;
    Pl.algorithm = "random";
    Pl.device.resize(N);
    for (int V = 0; V < N; ++V) Pl.device[V] = ClassDev.try_emplace(G.classOf(V), Dev(Rng)).first->second;
    if (!validatePlan(G, P, Pl, VO)) return Pl;
  }
  return Plan();
}
