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
#include <utility>
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
  /// A transfer group as charge() reads it, packed so one cache line holds
  /// it (issue 38: scattered per-group arrays made charge() miss the cache
  /// on 33k-node graphs).
  struct GroupRec {
    std::array<double, 3> price; ///< on each link slot (CommSum::slot)
    int src;                     ///< the sending node
    int size;                    ///< its edges
    bool srcBw;                  ///< whether the sender is a backward node
  };
  /// What addNode reads of one member of a unit, laid out unit by unit in
  /// UG.members order; its groups are the priced ones only (an unpriced
  /// group is never charged, so its counts are never read).
  struct NodeRec {
    int node;
    int inBegin, inEnd;   ///< InGroups: the group of each in-edge
    int ownBegin, ownEnd; ///< OwnGroups: the groups it sends
    bool bw, unsupported;
    double cpu, mem;
  };
  void addNode(const NodeRec &R);
  void charge(int Grp, double Sign);
  int NumKinds = 1;

  const Platform &P;
  double MemCap;
  std::vector<double> UnitWeights;
  std::vector<GroupRec> Groups;
  std::vector<int> NIn, NInFw;
  std::vector<int> UnitBegin;   ///< per unit, into Nodes (numUnits + 1)
  std::vector<NodeRec> Nodes;   ///< unit by unit
  std::vector<double> KindTime; ///< NumKinds per entry of Nodes
  std::vector<int> InGroups, OwnGroups;
  /// Per accelerator D: the link from D - 1 into it and from it to D + 1
  /// (siteOf's in and out links, the same for every set).
  std::vector<LinkKind> LinkIn, LinkOut;
  std::vector<char> Inside;
  SetSums S;
  std::vector<SetSums> Saved;

  // Backward contiguity: the current set's bitsets, one word each per
  // Words, changed in place with an undo log (issue 38: copying all three
  // to a new stack level on every add cost more than the rest of addUnit).
  // Viol counts the words where Anc & Desc & ~Bw is not empty.
  int Words = 0;
  std::vector<uint64_t> UnitAnc, UnitDesc, UnitBw; // per unit, Words each
  std::vector<uint64_t> Anc, Desc, Bw;
  struct WordUndo {
    int word;
    uint64_t anc, desc, bw;
  };
  std::vector<WordUndo> Undo;
  std::vector<std::pair<size_t, int>> Level; ///< per add: Undo's size, Viol
  int Viol = 0;
};

} // namespace onnxp::dp

#endif // ONNXP_LIB_PARTITION_DP_DEVICESETCOST_H
