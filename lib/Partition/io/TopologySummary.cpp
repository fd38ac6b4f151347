//===- Partition/io/TopologySummary.cpp - The machine in the run summary ===//
//
// See TopologySummary.h. Transfers are the evaluator's (planTransfers), so
// the figures add up to the device table's transfer column.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/io/TopologySummary.h"

#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>

using namespace onnxp;

bool onnxp::wantsTopologySummary(const CostGraph &G, const Platform &P) {
  if (P.multiNode() || P.mixed()) return true;
  if (P.accelerators <= 1) return false;
  for (const CostEdge &E : G.edges())
    if (E.bytes > 0) return true;
  return false;
}

void onnxp::printTopologySummary(std::ostream &OS, const CostGraph &G, const Platform &P, const Plan &Pl) {
  OS << "  topology: " << P.describeTopology() << "\n";
  if (!P.multiNode() || Pl.device.size() != G.numNodes()) return;
  for (int Dv : Pl.device)
    if (Dv < 0 || Dv >= P.numDevices()) return;
  TransferGroups T = computeTransferGroups(G);
  std::vector<PricedTransfer> All = planTransfers(G, P, T, Pl.device);
  struct PairSum {
    int count = 0;
    double bytes = 0, ms = 0;
  };
  std::map<std::pair<int, int>, PairSum> Cross;
  std::vector<double> NetIn(P.numDevices(), 0);
  std::map<int, double> GroupNet;
  for (const PricedTransfer &X : All) {
    if (X.link != LinkKind::Network) continue;
    PairSum &S = Cross[{X.from, X.to}];
    ++S.count;
    S.bytes += X.bytes;
    S.ms += X.ms;
    NetIn[X.to] += X.ms;
    GroupNet[X.group] = std::max(GroupNet[X.group], X.ms);
  }
  std::vector<double> NetOut(P.numDevices(), 0);
  for (auto &[Grp, Ms] : GroupNet) NetOut[Pl.device[T.src[Grp]]] += Ms;
  if (Cross.empty()) {
    OS << "  cross-node transfers: none (every stage boundary is inside a node)\n";
    return;
  }
  for (auto &[Pair, S] : Cross)
    OS << "  cross-node: " << P.deviceName(Pair.first) << " (node " << P.nodeOf(Pair.first) << ") -> "
       << P.deviceName(Pair.second) << " (node " << P.nodeOf(Pair.second) << "): " << S.count << " transfer"
       << (S.count == 1 ? "" : "s") << ", " << humanBytes(S.bytes) << ", " << formatNumber(S.ms) << " "
       << G.timeUnit << "\n";
  // The busiest device and how much of its load is the network.
  int Busiest = -1;
  for (int D = 0; D < (int)Pl.usage.size(); ++D)
    if (Busiest < 0 || Pl.usage[D].load > Pl.usage[Busiest].load) Busiest = D;
  if (Busiest >= 0 && Pl.usage[Busiest].load > 0) {
    double Net = NetIn[Busiest] + NetOut[Busiest];
    char Buf[32];
    std::snprintf(Buf, sizeof(Buf), "%.1f%%", 100 * Net / Pl.usage[Busiest].load);
    OS << "  network share of the busiest device (" << P.deviceName(Busiest) << "): " << formatNumber(Net)
       << " of " << formatNumber(Pl.usage[Busiest].load) << " " << G.timeUnit << " (" << Buf << ")\n";
  }
}
