//===- Partition/pipeline/StageReplicaDP.cpp - Per-stage replica counts ===//
//
// See StageReplicaDP.h. The all-reduce of S > 0 bytes over a fixed group is
// affine in S (Cost/AllReduce.h), so the recurrence prices it from two
// coefficients per (d, accelerators after) instead of a call per stage.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/StageReplicaDP.h"

#include "onnx-partition/Cost/AllReduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace onnxp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The all-reduce over accelerators [N - After - D, N - After) as
/// Fixed + PerByte S for S > 0 bytes (0 for one replica or no bytes), and
/// the optimizer step's ms per byte moved on that group.
struct GroupPrice {
  double fixed = 0, perByte = 0, stepPerByte = 0;
  double syncMs(double Gradient, double Traffic) const {
    if (!(Gradient > 0)) return 0;
    return fixed + perByte * Gradient + stepPerByte * Gradient * Traffic;
  }
};

GroupPrice groupPrice(const Platform &P, int D, int After) {
  std::vector<int> Devs(D);
  std::iota(Devs.begin(), Devs.end(), P.accelerators - After - D);
  GroupPrice G;
  const double One = allReduceMs(P, 1, Devs), Two = allReduceMs(P, 2, Devs);
  G.perByte = Two - One;
  G.fixed = One - G.perByte;
  double Bandwidth = P.specOf(Devs.front()).memBandwidth;
  for (int Dev : Devs) Bandwidth = std::min(Bandwidth, P.specOf(Dev).memBandwidth);
  G.stepPerByte = Bandwidth > 0 ? 1e3 / Bandwidth : 0;
  return G;
}

/// The stage cost of the header, its group already priced.
double cost(const StageChain &C, const StageReplicaRequest &R, int I, int J, int D, int After,
            const GroupPrice &G) {
  const int PerReplica = (R.microbatches + D - 1) / D;
  const int InFlight = !R.training ? 0 : R.gpipe ? PerReplica : std::min(After / D + 1, PerReplica);
  if (C.span(C.state, I, J) + InFlight * C.span(C.saved, I, J) > R.memory * (1 + 1e-12)) return kInf;
  const double Head = C.span(C.forward, 0, I);
  if (!R.training) return Head + PerReplica * C.span(C.forward, I, J) + C.span(C.forward, J, C.size);
  const double Work = PerReplica * (C.span(C.forward, I, J) + C.span(C.backward, I, J));
  return Head + Work +
         std::max(G.syncMs(C.span(C.gradient, I, J), R.optimizerTraffic), C.span(C.backward, 0, I));
}

bool valid(const Platform &P, const StageReplicaRequest &R, int D, int After) {
  return D >= 1 && D <= R.microbatches && After >= 0 && D + After <= P.accelerators;
}

} // namespace

double onnxp::stageReplicaCost(const StageChain &C, const Platform &P, const StageReplicaRequest &R, int I,
                               int J, int D, int After) {
  if (!valid(P, R, D, After) || I < 0 || J <= I || J > C.size) return kInf;
  return cost(C, R, I, J, D, After, groupPrice(P, D, After));
}

std::vector<std::optional<StageReplicaLayout>>
onnxp::stageReplicaLayouts(const StageChain &C, const Platform &P, const StageReplicaRequest &R) {
  const int N = P.accelerators, Blocks = C.size;
  std::vector<std::optional<StageReplicaLayout>> Out(std::max(0, N) + 1);
  if (N < 1 || Blocks < 1 || R.microbatches < 1) return Out;
  // Group prices by (d, after): d + after <= N.
  std::vector<std::vector<GroupPrice>> Group(N + 1, std::vector<GroupPrice>(N + 1));
  for (int D = 1; D <= N; ++D)
    for (int After = 0; D + After <= N; ++After) Group[D][After] = groupPrice(P, D, After);
  // F[i][w]: the best cost of blocks [i, n) on the last w accelerators;
  // Next[i][w] = (j, d) of its first stage.
  std::vector<std::vector<double>> F(Blocks + 1, std::vector<double>(N + 1, kInf));
  std::vector<std::vector<std::pair<int, int>>> Next(Blocks + 1, std::vector<std::pair<int, int>>(N + 1));
  F[Blocks][0] = 0;
  for (int I = Blocks - 1; I >= 0; --I)
    for (int W = 1; W <= N; ++W)
      for (int D = 1; D <= std::min(W, R.microbatches); ++D) {
        const int After = W - D;
        for (int J = I + 1; J <= Blocks; ++J) {
          const double Rest = F[J][After];
          if (!(Rest < F[I][W])) continue;
          const double Here = cost(C, R, I, J, D, After, Group[D][After]);
          // Longer stages only cost more (time and memory grow with J).
          if (Here == kInf) break;
          const double V = std::max(Rest, Here);
          if (V < F[I][W]) {
            F[I][W] = V;
            Next[I][W] = {J, D};
          }
        }
      }
  for (int W = 1; W <= N; ++W) {
    if (F[0][W] == kInf) continue;
    StageReplicaLayout L;
    L.cost = F[0][W];
    for (int I = 0, Left = W; I < Blocks;) {
      const auto [J, D] = Next[I][Left];
      L.bounds.push_back(I);
      L.replicas.push_back(D);
      L.base.push_back(N - Left);
      I = J;
      Left -= D;
    }
    L.bounds.push_back(Blocks);
    Out[W] = std::move(L);
  }
  return Out;
}
