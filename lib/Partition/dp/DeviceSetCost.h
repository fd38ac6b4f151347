//===- Partition/dp/DeviceSetCost.h - Incremental load of one device -*- C++ -*-===//
//
// The DP prices every contiguous set S = I \ I' it considers (seed 004
// §5.1.1: acc(S) = incoming transfers + processing + outgoing transfers,
// cpu(S) = processing). Sets are grown and shrunk one unit at a time
// (last in, first out) while the DP walks up the ideal lattice from I', so
// the price is kept incrementally:
//  - integer state per transfer group (how many of its edges end inside the
//    set) and per node (inside or not) is updated in O(degree) and undone
//    exactly;
//  - the floating-point sums are snapshotted on every add and restored on
//    remove, so no rounding drift accumulates over millions of steps;
//  - backward contiguity (§5.3: the backward partners of S must be
//    contiguous in the backward graph) is the test
//        Anc(B) & Desc(B) \subseteq B
//    over bitsets of the original backward nodes, where Anc/Desc are the
//    unions of the ancestors/descendants (in the backward graph) of B's
//    members: a node outside B both below and above B is exactly a path
//    leaving B and re-entering it (Def. 3.1).
// All of this is measured on the ORIGINAL CostGraph, with the evaluator's
// transfer groups, so the DP's value is the value PlanEvaluator gives.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_DP_DEVICESETCOST_H
#define ONNXP_LIB_PARTITION_DP_DEVICESETCOST_H

#include "UnitGraph.h"

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"

#include <array>
#include <cstdint>
#include <vector>

namespace onnxp::dp {

/// Transfers of a set priced on each link a stage boundary can cross
/// (issue 21): peer, network, host.
struct CommSum {
  double byLink[3] = {0, 0, 0};
  static int slot(LinkKind K) { return K == LinkKind::Network ? 1 : K == LinkKind::Host ? 2 : 0; }
  double on(LinkKind K) const { return byLink[slot(K)]; }
};

/// The additive part of a device's load, split by forward/backward role for
/// the "gpipe" objective.
struct SetSums {
  double accFw[kMaxAcceleratorKinds] = {}, accBw[kMaxAcceleratorKinds] = {}; ///< processing per kind
  double cpuFw = 0, cpuBw = 0;                                               ///< processing on a CPU
  CommSum inFw, inBw, outFw, outBw;
  double mem = 0, weights = 0;
  int unsupported = 0;
};

/// Where a stage sits in the device order (IdealDP.cpp): the link its
/// inputs arrive on, the link its outputs leave on, its accelerator kind.
struct StageSite {
  LinkKind in = LinkKind::Peer, out = LinkKind::Peer;
  int kind = 0;
};

class DeviceSetCost {
public:
  DeviceSetCost(const CostGraph &G, const UnitGraph &UG, const Platform &P);

  void addUnit(int U);
  /// Removes the unit added last.
  void removeUnit(int U);

  const SetSums &sums() const { return S; }
  /// Processing on the fastest kind (a lower bound the walk prunes by).
  double accProcessing() const;
  double accProcessingOn(int Kind) const { return S.accFw[Kind] + S.accBw[Kind]; }
  /// The site of a stage on accelerators First..First+R-1 of P's order: in
  /// from First-1 (the host for the first accelerator), out to First+R (the
  /// host after the last), the slowest kind it spans.
  StageSite siteOf(int First, int R) const;
  double cpuProcessing() const { return S.cpuFw + S.cpuBw; }
  bool fitsAccelerator() const { return S.unsupported == 0 && S.mem <= MemCap; }
  /// Whether the backward members form a contiguous set (§5.3).
  bool backwardContiguous() const;
  /// Accelerator load at a site, replicated over R accelerators (App. C.1,
  /// C.2); the default site is a middle accelerator of the reference kind.
  double accLoad(int R = 1, StageSite Site = {}) const;
  double accForwardLoad(int R = 1, StageSite Site = {}) const;
  double accBackwardLoad(int R = 1, StageSite Site = {}) const;
  double cpuLoad() const { return cpuProcessing(); }

private:
  void addNode(int V);
  void removeNode(int V);
  void charge(int Grp, double Sign);
  int NumKinds = 1;

  const CostGraph &G;
  const UnitGraph &UG;
  const Platform &P;
  TransferGroups T;
  double MemCap;
  std::vector<double> UnitWeights;
  std::vector<int> GroupSize, NIn, NInFw;
  /// Per transfer group, its price on each link slot (CommSum::slot):
  /// computed once, charge() runs millions of times (issue 22: a third of
  /// dp's time on BLOOM-3 went to pricing the same groups again).
  std::vector<std::array<double, 3>> GroupPrice;
  /// Per transfer group: whether it is priced at all, and whether its
  /// sender is a backward node.
  std::vector<char> GroupPriced, GroupSrcBw;
  /// Per accelerator D: the link from D - 1 into it and from it to D + 1
  /// (siteOf's in and out links, the same for every set).
  std::vector<LinkKind> LinkIn, LinkOut;
  std::vector<char> Inside;
  SetSums S;
  std::vector<SetSums> Saved;

  // Backward contiguity.
  int Words = 0;
  std::vector<uint64_t> UnitAnc, UnitDesc, UnitBw; // per unit, Words each
  std::vector<uint64_t> Anc, Desc, Bw;             // stacks, Words per level
};

} // namespace onnxp::dp

#endif // ONNXP_LIB_PARTITION_DP_DEVICESETCOST_H
