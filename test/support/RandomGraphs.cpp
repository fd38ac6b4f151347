//===- support/RandomGraphs.cpp - Random cost graphs for property tests ---===//
//
// See RandomGraphs.h. Each draw keeps the order of the test it came from
// (DPTestUtil, IpTestUtil, ClassPolishTest, LivenessTest,
// PipelineInFlightTest, MixedBalanceTest before issue 32): changing an
// order changes those tests' inputs.
//
//===----------------------------------------------------------------------===//
#include "RandomGraphs.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace onnxp;

namespace {

/// GraphDraws::QuarterMs.
CostGraph quarterMsGraph(std::mt19937 &Rng, const test::RandomGraphSpec &S) {
  std::uniform_real_distribution<double> Time(0.5, 10), Cost(0, 3), Mem(1, 10);
  std::uniform_real_distribution<double> Coin(0, 1);
  CostGraph G;
  auto Node = [&](const std::string &Name, Role R) {
    CostNode N;
    N.name = Name;
    N.role = R;
    N.accTime = std::round(Time(Rng) * 4) / 4;
    N.cpuTime = std::round(Time(Rng) * 3 * 4) / 4;
    N.memBytes = std::round(Mem(Rng));
    N.accSupported = !(S.unsupported && Coin(Rng) < 0.15);
    return G.addNode(N);
  };
  // Per-node output cost, shared by its out-edges unless non-uniform.
  std::vector<double> Out;
  auto Edge = [&](int A, int B) {
    CostEdge E;
    E.src = A;
    E.dst = B;
    E.commTime = S.nonUniformCosts && Coin(Rng) < 0.3 ? std::round(Cost(Rng) * 4) / 4 : Out[A];
    G.addEdge(E);
  };
  const int F = S.forwardNodes;
  for (int I = 0; I < F; ++I) {
    int V = Node("f" + std::to_string(I), Role::Forward);
    Out.push_back(std::round(Cost(Rng) * 4) / 4);
    // Now and then a node that costs nothing (a dangling output, a reshape
    // of an input), which the DP's exact reductions fuse away: the oracle
    // must still agree.
    if (Coin(Rng) < 0.2) {
      G.node(V).accTime = G.node(V).cpuTime = 0;
      if (Coin(Rng) < 0.5) {
        G.node(V).memBytes = 0;
        Out.back() = 0;
      }
    }
  }
  std::vector<std::pair<int, int>> FwEdges;
  for (int I = 0; I < F; ++I)
    for (int J = I + 1; J < F; ++J)
      if (Coin(Rng) < S.edgeProb) {
        Edge(I, J);
        FwEdges.push_back({I, J});
      }
  int NextClass = 0;
  if (S.colocation)
    for (int I = 0; I < F; ++I)
      if (Coin(Rng) < 0.25) {
        int J = std::uniform_int_distribution<int>(0, F - 1)(Rng);
        if (J == I) continue;
        int C = G.node(J).colocClass >= 0 ? G.node(J).colocClass : NextClass++;
        G.node(I).colocClass = G.node(J).colocClass = C;
      }
  if (!S.training) {
    G.normalizeClasses();
    return G;
  }

  // Backward: a mirror of most forward nodes, colocated with them, plus an
  // orphan or two; activations flow from a forward node to its mate.
  std::vector<int> Mate(F, -1);
  for (int I = 0; I < F; ++I) {
    if (Coin(Rng) < 0.3) continue;
    int B = Node("b" + std::to_string(I), Role::Backward);
    Out.push_back(std::round(Cost(Rng) * 4) / 4);
    Mate[I] = B;
    if (G.node(I).colocClass < 0) G.node(I).colocClass = NextClass++;
    G.node(B).colocClass = G.node(I).colocClass;
    G.node(B).partner = I;
    if (Coin(Rng) < 0.5) Edge(I, B);
  }
  std::vector<int> Orphans;
  int NumOrphans = std::uniform_int_distribution<int>(0, 2)(Rng);
  for (int I = 0; I < NumOrphans; ++I) {
    int B = Node("o" + std::to_string(I), Role::Backward);
    Out.push_back(std::round(Cost(Rng) * 4) / 4);
    G.node(B).colocClass = NextClass++;
    Orphans.push_back(B);
  }
  for (auto [I, J] : FwEdges)
    if (Mate[I] >= 0 && Mate[J] >= 0) Edge(Mate[J], Mate[I]);
  // Orphans hang between backward nodes, respecting a topological order of
  // the backward part (mates in decreasing forward index, then orphans).
  std::vector<int> BwOrder;
  for (int I = F - 1; I >= 0; --I)
    if (Mate[I] >= 0) BwOrder.push_back(Mate[I]);
  for (int O : Orphans) {
    int Pos = std::uniform_int_distribution<int>(0, static_cast<int>(BwOrder.size()))(Rng);
    if (Pos > 0) Edge(BwOrder[Pos - 1], O);
    if (Pos < static_cast<int>(BwOrder.size()) && Coin(Rng) < 0.7) Edge(O, BwOrder[Pos]);
    BwOrder.insert(BwOrder.begin() + Pos, O);
  }
  G.normalizeClasses();
  return G;
}

/// GraphDraws::IntegerMs, inference.
CostGraph integerMsDag(std::mt19937 &Rng, int N, double EdgeProb, bool NonUniform, bool Unsupported) {
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

/// GraphDraws::IntegerMs, training.
CostGraph integerMsTraining(std::mt19937 &Rng, int F, double EdgeProb) {
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

/// GraphDraws::Transfers.
CostGraph transfersGraph(std::mt19937 &Rng, int N) {
  CostGraph G;
  std::uniform_real_distribution<double> Time(0.1, 2.0), Coin(0, 1);
  for (int V = 0; V < N; ++V) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(V);
    Nd.op = "Op";
    Nd.role = V >= 2 * N / 3 ? Role::Backward : Role::Forward;
    Nd.accTime = Time(Rng);
    Nd.cpuTime = 5 * Nd.accTime;
    Nd.memBytes = 1e6;
    Nd.colocClass = V > 0 && Coin(Rng) < 0.2 ? G.classOf(V - 1) : -1;
    G.addNode(Nd);
  }
  for (int U = 0; U < N; ++U) {
    const bool Named = Coin(Rng) < 0.5;
    for (int V = U + 1; V < N; ++V) {
      if (Coin(Rng) > (V == U + 1 ? 0.9 : 0.12)) continue;
      CostEdge E;
      E.src = U;
      E.dst = V;
      if (Named) {
        E.tensor = "t" + std::to_string(U);
        E.bytes = 2e6;
        E.commTime = 0.2;
      } else {
        // Unnamed edges with different times: one transfer group each.
        E.bytes = Coin(Rng) < 0.3 ? 0 : 1e6 * (1 + V % 3);
        E.commTime = 0.05 * (1 + V % 4);
      }
      G.addEdge(E);
    }
  }
  G.normalizeClasses();
  return G;
}

/// GraphDraws::Tensors.
CostGraph tensorsGraph(std::mt19937 &R, int N, bool Training) {
  auto Uni = [&](int Lo, int Hi) { return std::uniform_int_distribution<int>(Lo, Hi)(R); };
  CostGraph G;
  for (int V = 0; V < N; ++V) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(V);
    Nd.role = Training && V >= N / 2 ? Role::Backward : Role::Forward;
    Nd.paramBytes = Uni(0, 3) == 0 ? Uni(1, 50) : 0;
    Nd.gradBytes = Training ? Nd.paramBytes : 0;
    Nd.optimizerBytes = 2 * Nd.gradBytes;
    Nd.workspaceBytes = Uni(0, 2) == 0 ? Uni(1, 20) : 0;
    Nd.onnxNodes = {V};
    G.addNode(Nd);
  }
  for (int V = 0; V < N; ++V) {
    const int Outs = Uni(1, 3);
    double Made = 0;
    for (int T = 0; T < Outs; ++T) {
      const double Bytes = Uni(1, 100);
      Made += Bytes;
      for (int W = V + 1; W < N; ++W)
        if (Uni(0, 3) == 0) G.addEdge({V, W, "t" + std::to_string(V) + "_" + std::to_string(T), Bytes, 0});
    }
    G.node(V).outputBytes = Made + (Uni(0, 2) == 0 ? Uni(1, 30) : 0); // some unread output
  }
  return G;
}

} // namespace

CostGraph onnxp::test::randomGraph(std::mt19937 &Rng, const RandomGraphSpec &S) {
  switch (S.draws) {
  case GraphDraws::QuarterMs: return quarterMsGraph(Rng, S);
  case GraphDraws::IntegerMs:
    return S.training ? integerMsTraining(Rng, S.forwardNodes, S.edgeProb)
                      : integerMsDag(Rng, S.forwardNodes, S.edgeProb, S.nonUniformCosts, S.unsupported);
  case GraphDraws::Transfers: return transfersGraph(Rng, S.forwardNodes);
  case GraphDraws::Tensors: return tensorsGraph(Rng, S.forwardNodes, S.training);
  }
  return CostGraph();
}

CostGraph onnxp::test::randomDag(std::mt19937 &Rng, int N, double EdgeProb, bool NonUniform,
                                 bool Unsupported) {
  return integerMsDag(Rng, N, EdgeProb, NonUniform, Unsupported);
}

CostGraph onnxp::test::randomTrainingGraph(std::mt19937 &Rng, int F, double EdgeProb) {
  return integerMsTraining(Rng, F, EdgeProb);
}

CostGraph onnxp::test::randomTrainingChain(std::mt19937 &R, int N, bool Skips) {
  auto Uni = [&](int Lo, int Hi) { return std::uniform_int_distribution<int>(Lo, Hi)(R); };
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Nd;
    Nd.name = "f" + std::to_string(I);
    Nd.accTime = Uni(1, 10);
    Nd.paramBytes = Uni(0, 100);
    Nd.gradBytes = Nd.paramBytes;
    Nd.onnxNodes = {I};
    G.addNode(Nd);
  }
  for (int I = N - 1; I >= 0; --I) {
    CostNode Nd;
    Nd.name = "b" + std::to_string(I);
    Nd.role = Role::Backward;
    Nd.accTime = Uni(1, 20);
    Nd.onnxNodes = {2 * N - 1 - I};
    G.addNode(Nd);
  }
  auto B = [N](int I) { return 2 * N - 1 - I; };
  for (int I = 0; I < N; ++I) {
    const double X = Uni(1, 1000);
    G.node(I).outputBytes = X;
    G.node(I).savedBytes = X;
    if (I + 1 < N) G.addEdge({I, I + 1, "x" + std::to_string(I), X, 0});
    G.addEdge({I, B(I), "x" + std::to_string(I), X, 0});
    if (Skips && I + 2 < N && Uni(0, 1)) {
      G.addEdge({I, I + 2, "x" + std::to_string(I), X, 0});
      G.addEdge({I, B(I + 2), "x" + std::to_string(I), X, 0});
    }
    if (I > 0) G.addEdge({B(I), B(I - 1), "g" + std::to_string(I), double(Uni(1, 100)), 0});
  }
  return G;
}

CostGraph onnxp::test::randomRooflineChain(const Platform &P, std::mt19937 &Rng, int N) {
  std::uniform_int_distribution<int> Ms(1, 5), Bytes(1, 30);
  CostGraph G;
  for (int I = 0; I < N; ++I) {
    CostNode Nd;
    Nd.name = "n" + std::to_string(I);
    Nd.accTime = Ms(Rng);
    Nd.cpuTime = 100 * Nd.accTime;
    Nd.flops = Nd.accTime * 1e-3 * P.accelerator.peakFlops;
    G.addNode(Nd);
  }
  for (int I = 0; I + 1 < N; ++I) {
    CostEdge E;
    E.src = I;
    E.dst = I + 1;
    E.tensor = "t" + std::to_string(I);
    E.bytes = Bytes(Rng) * 0.1e-3 * P.peerLinkBandwidth;
    E.commTime = P.hostTransferMs(E.bytes);
    G.addEdge(E);
  }
  return G;
}
