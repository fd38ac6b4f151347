//===- Partition/ScheduleEmulator.h - FIFO scheduler emulation --*- C++ -*-===//
//
// Emulates how a dataflow runtime executes a placed graph (seed 003 §3.2.1,
// "Scheduler emulator"): every device owns a FIFO ready queue; a node enters
// its device's queue once all its inputs have arrived (producer finish time,
// plus the edge's commTime when the producer sits on another device), and a
// device runs the nodes of its queue one at a time in arrival order. The
// result is a start and finish time per node and the makespan (seed 003
// Table 2, C_max).
//
// On top of the timing, the memory consumption tracker of seed 003 Eq. (2)
// turns the schedule into memory buffers with lifetimes and the peak memory
// of every device:
//  - a residual node (parameters or optimizer state, see isResidualNode)
//    holds memBytes on its device for the whole iteration;
//  - a normal node holds memBytes on its device from its start until it
//    finishes and every consumer on the same device has finished (Eq. (2)
//    frees an input once its last consumer has started; keeping it while that
//    consumer runs is the conservative reading, since the kernel reads it);
//  - a node with consumers on another device holds a copy there from its
//    finish time until the last consumer on that device has finished (the
//    third term of Eq. (2)); the copy is outputBytes, or memBytes when the
//    node records no output size.
//
// This module knows nothing about how a plan was made: the validator and the
// tests use it to check pardnn's plans independently.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_SCHEDULEEMULATOR_H
#define ONNXP_PARTITION_SCHEDULEEMULATOR_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp {

/// Whether a node's memory lives across iterations (seed 003 "res_ns"):
/// nodes that own parameters (paramBytes > 0) and optimizer nodes (their
/// state, e.g. momenta, survives the iteration). Everything else is a
/// "normal" node whose output is freed after its last consumer.
bool isResidualNode(const CostNode &N);

/// Time of node V when placed on device Dev: accTime on accelerators,
/// cpuTime on CPUs.
double nodeTimeOn(const CostGraph &G, const Platform &P, int V, int Dev);

/// One block of memory held on a device during [alloc, release].
struct MemoryBuffer {
  int node = -1;   ///< whose data it is
  int device = -1; ///< where it is held
  double alloc = 0;
  double release = 0;
  double bytes = 0;
  bool residual = false; ///< held for the whole iteration
  bool copy = false;     ///< a received copy of a node on another device
  /// The consumer on `device` whose finish releases it (the node's last
  /// descendant on that device), or -1.
  int lastConsumer = -1;
};

/// The emulated execution of a plan.
struct Schedule {
  std::vector<double> start, finish; ///< per node
  double makespan = 0;
  std::vector<double> peakMemory;    ///< per device, bytes
  std::vector<double> peakTime;      ///< when the peak is reached
  std::vector<MemoryBuffer> buffers; ///< all buffers, grouped by device
  std::vector<size_t> deviceBegin;   ///< buffers of device D: [deviceBegin[D], deviceBegin[D+1])
};

/// Start and finish times only (no memory): the FIFO ready-queue emulation.
/// Errors on a plan that does not fit the graph or a cyclic graph.
Expected<Schedule> emulateTiming(const CostGraph &G, const Platform &P, const std::vector<int> &Device);

/// Fills S.buffers, S.peakMemory and S.peakTime from S.start/S.finish.
void trackMemory(const CostGraph &G, const Platform &P, const std::vector<int> &Device, Schedule &S);

/// Timing plus memory: the independent makespan and peak memory of a plan.
Expected<Schedule> emulateSchedule(const CostGraph &G, const Platform &P, const Plan &Pl);

/// Whether buffer B is held at time T under the sweep convention of
/// trackMemory (releases at T happen before allocations at T, except for
/// zero-length buffers, which exist at their instant).
inline bool isLiveAt(const MemoryBuffer &B, double T) {
  if (B.alloc > T) return false;
  return B.release > T || (B.release == B.alloc && B.alloc == T);
}

} // namespace onnxp

#endif // ONNXP_PARTITION_SCHEDULEEMULATOR_H
