//===- Partition/PlanEvaluator.h - Price any plan ---------------*- C++ -*-===//
//
// Prices a plan under the cost model of seed 004 §3, independently of the
// algorithm that produced it: an accelerator's load is its incoming transfers
// + processing + outgoing transfers; a CPU's load is its processing.
// Processing is the node's time on that device (Platform::nodeTimeMs, mixed
// platforms); each transfer is priced by the link between the two devices
// (Platform::transferMs: peer inside a node, network across nodes, host
// link to and from CPUs; issue 21).
//
// A transfer is one *transfer group* of a node's out-edges (see
// computeTransferGroups): it is charged once on the sending accelerator when
// any of its edges leaves the device, and once on every other accelerator
// that receives it. When all out-edges of a node carry the same cost (every
// workload of ../shared/workloads/msr) the node has one group, which is
// exactly the semantics the published Table 1 carries (workloads/msr/
// README.md); non-uniform costs follow the subdivision of App. B.
//
// With Platform::overlapComm an accelerator's load is max(compute, in + out),
// or max(in, compute, out) with Platform::fullDuplex (App. C.1). A device
// whose nodes are replicated over r accelerators (Plan::replicas, App. C.2)
// has load acc/r + all-reduce time (max of the two with overlapComm).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PLANEVALUATOR_H
#define ONNXP_PARTITION_PLANEVALUATOR_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

/// Objectives the evaluator knows.
///  - "max-load": max over devices of the device load (time per sample);
///    for training this is max over devices of FW+BW (seed 004 App. A).
///  - "gpipe": max over devices of the forward load + max of the backward load.
struct Evaluation {
  double objective = 0;
  double maxForwardLoad = 0;
  double maxBackwardLoad = 0;
  std::vector<DeviceUsage> usage;
};

/// The transfers a node's output makes (seed 004 §3 and App. B). Out-edges
/// naming the same tensor carry one transfer; unnamed out-edges of a node
/// carry one transfer when their costs are all equal (the README semantics),
/// else one transfer each -- the subdivision of App. B ("insert w_j
/// colocated with u, c_{w_j} = d_j"), which charges every crossing edge.
struct TransferGroups {
  std::vector<int> ofEdge;              ///< group id per edge
  std::vector<int> src;                 ///< per group: the sending node
  std::vector<double> cost;             ///< per group: time of the transfer
  std::vector<double> bytes;            ///< per group: bytes moved (0: unknown)
  std::vector<std::vector<int>> edges;  ///< per group: its edge ids
  std::vector<std::vector<int>> ofNode; ///< per node: its groups
  size_t size() const { return src.size(); }
};
TransferGroups computeTransferGroups(const CostGraph &G);

/// Time of group Grp moved from device From to device To, by the link it
/// crosses (Platform::transferMs).
inline double groupTransferMs(const Platform &P, const TransferGroups &T, int Grp, int From, int To) {
  return P.transferMs(From, To, T.bytes[Grp], T.cost[Grp]);
}

/// One transfer of a plan: group Grp from the sender's device to one
/// receiving device (issue 21). The receiver pays `ms` (when it is an
/// accelerator); the sender pays the largest `ms` of its group once (it
/// writes its output at the pace of the slowest link it crosses; with one
/// uniform link this is the seed's single c_u).
struct PricedTransfer {
  int group = -1;
  int from = -1, to = -1;
  LinkKind link = LinkKind::Local;
  double bytes = 0;
  double ms = 0;
};
/// Every transfer of the placement Device, by group then receiving device.
std::vector<PricedTransfer> planTransfers(const CostGraph &G, const Platform &P, const TransferGroups &T,
                                          const std::vector<int> &Device);

/// Bytes of weights all-reduced when a stage holding Nodes is replicated:
/// paramBytes when the graph carries any, else memBytes (the m_v of App.
/// C.2, which workload files only give as a total size).
double replicatedWeightBytes(const CostGraph &G, const std::vector<int> &Nodes);
/// Time (graph time unit, taken as ms) to all-reduce Bytes over R replicas:
/// (R-1) * Bytes / (R * B) with B the peer link bandwidth (App. C.2).
double allReduceTime(const Platform &P, double Bytes, int R);
/// Load of a device with the given parts (App. C.1, C.2); R = replicas.
double deviceLoad(const Platform &P, bool Accelerator, double Compute, double CommIn, double CommOut,
                  int R = 1, double AllReduce = 0);

/// Prices Pl on G and P. Errors on a plan that does not fit the graph.
/// Objective is MaxLoad or Gpipe (others are priced by finalizePlan).
Expected<Evaluation> evaluatePlan(const CostGraph &G, const Platform &P, const Plan &Pl,
                                  Objective Obj = Objective::MaxLoad);

/// Evaluates and stores objective and usage into Pl.
Error evaluateInto(const CostGraph &G, const Platform &P, Plan &Pl, Objective Obj = Objective::MaxLoad);

} // namespace onnxp

#endif // ONNXP_PARTITION_PLANEVALUATOR_H
