//===- Partition/dp/UnitGraph.h - App. B preprocessing for the DP -*- C++ -*-===//
//
// The ideal DP of seed 004 §5.1.1 runs on a DAG of *units*: the forward
// supernodes of App. B. Building them:
//  1. every colocation class C is one forward supernode holding C_FW and,
//     riding along, C_BW (the DP places a backward class with its forward
//     mate); a class with backward nodes only (an orphan) gets an
//     artificial, empty forward image;
//  2. forward edges between classes, plus a mirror edge (v, u) between the
//     forward images for every backward edge (u', v') touching an orphan;
//  3. strongly connected components of that graph are fused (every
//     colocation-respecting split must keep them on one device).
// Units are numbered in a topological order, which the lattice enumeration
// relies on. With Linearize (DPL, §5.1.2) a DFS topological order is taken
// and a path of artificial edges added along it, leaving |units|+1 ideals.
//
// Non-uniform out-edge costs (App. B's subdivision) need no new nodes here:
// the subdivided w_j would be colocated with u, i.e. contracted into u's
// unit at once; their only trace is in the cost, which the DP prices per
// transfer group of the original graph (DeviceSetCost, PlanEvaluator).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_DP_UNITGRAPH_H
#define ONNXP_LIB_PARTITION_DP_UNITGRAPH_H

#include "onnx-partition/IR/CostGraph.h"

#include <vector>

namespace onnxp::dp {

struct UnitGraph {
  /// Original nodes (forward and backward) per unit.
  std::vector<std::vector<int>> members;
  /// Unit DAG; units are numbered so that every edge goes to a larger id.
  std::vector<std::vector<int>> preds, succs;
  std::vector<int> unitOf; ///< per original node
  int orphanClasses = 0;   ///< backward-only classes given a forward image
  int mirrorEdges = 0;
  int fusedComponents = 0; ///< SCCs with more than one supernode
  int absorbedSinks = 0;   ///< free sinks and free units fused into a neighbour

  int numUnits() const { return static_cast<int>(members.size()); }
};

/// Exact reductions buildUnitGraph may apply (each keeps the optimum of the
/// objective it is asked for; the caller picks which are valid).
///
/// A *free* unit -- no time, no memory, no weights, no backward member,
/// zero-cost edges only -- is fused with its only successor unit (or,
/// without successors, its only predecessor): wherever it sits it changes
/// no load, and that stage keeps the stage order. (Free units with backward
/// members are kept: moving them could break a device's backward
/// contiguity.) Valid for every objective.
///
/// A *free sink* -- a unit that (a) has no successors, (b) receives edges
/// from one other unit p only, (c) costs no time on any device and runs on
/// accelerators -- is fused into p. Valid when every split fits in memory
/// (the whole graph fits one accelerator) and there is no replication:
/// moving the sink next to p never makes a split invalid (it stays
/// contiguous: nothing comes after it) nor any load larger (its old device
/// loses in-transfers, p's device only loses out-transfers). For "gpipe"
/// an in-transfer that stays could move from the forward to the backward
/// load, so there only sinks whose producers feed no backward node
/// qualify. This removes the 2^(dangling outputs) factor from the ideal
/// count (GNMT: 3.3M ideals -> 28k, and 168 with free units).
enum class Reductions { None, FreeUnits, FreeUnitsAndSinks, FreeUnitsAndForwardReadSinks };

/// Builds the unit DAG of G. Never fails on a DAG.
UnitGraph buildUnitGraph(const CostGraph &G, bool Linearize, Reductions R = Reductions::None);

} // namespace onnxp::dp

#endif // ONNXP_LIB_PARTITION_DP_UNITGRAPH_H
