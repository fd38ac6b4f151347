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
#include <cmath>
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

namespace {
std::string percentOf(double Part, double Whole) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f%%", 100 * Part / Whole);
  return Buf;
}

/// Where the gap between the busiest device's load and the universal bound
/// goes, measured on the plan: the bound counts no transfer, so with loads
/// that add compute and transfers (no --overlap-comm) the gap is the busiest
/// device's compute above the bound (granularity, contiguity, imbalance)
/// plus its transfers, split into network and the other links.
void printBoundGap(std::ostream &OS, const CostGraph &G, const Plan &Pl, int Busiest, double Net) {
  const DeviceUsage &U = Pl.usage[Busiest];
  const double Comm = U.commIn + U.commOut;
  if (std::isnan(Pl.universalBound) || std::fabs(U.compute + Comm - U.load) > 1e-9 * std::max(1.0, U.load))
    return; // overlapped or replicated loads do not add up this way
  const double Over = U.compute - Pl.universalBound, Other = Comm - Net;
  OS << "  gap to the universal bound " << formatNumber(Pl.universalBound) << " on "
     << "the busiest device: compute " << formatNumber(U.compute) << " (" << (Over >= 0 ? "+" : "")
     << formatNumber(Over) << ", " << percentOf(Over, U.load)
     << " of its load: granularity, contiguity, imbalance), network " << formatNumber(Net) << " ("
     << percentOf(Net, U.load) << "), other links " << formatNumber(Other) << " (" << percentOf(Other, U.load)
     << ") " << G.timeUnit << "\n";
}
} // namespace

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
    printBoundGap(OS, G, Pl, Busiest, Net);
  }
}

std::vector<double> onnxp::networkMsByDevice(const CostGraph &G, const Platform &P, const Plan &Pl) {
  if (!P.multiNode() || Pl.device.size() != G.numNodes()) return {};
  for (int Dv : Pl.device)
    if (Dv < 0 || Dv >= P.numDevices()) return {};
  TransferGroups T = computeTransferGroups(G);
  std::vector<double> Net(P.numDevices(), 0);
  std::map<int, double> GroupNet;
  for (const PricedTransfer &X : planTransfers(G, P, T, Pl.device)) {
    if (X.link != LinkKind::Network) continue;
    Net[X.to] += X.ms;
    GroupNet[X.group] = std::max(GroupNet[X.group], X.ms);
  }
  for (auto &[Grp, Ms] : GroupNet) Net[Pl.device[T.src[Grp]]] += Ms;
  return Net;
}
