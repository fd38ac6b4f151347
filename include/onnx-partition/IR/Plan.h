//===- IR/Plan.h - What a partitioner decides -------------------*- C++ -*-===//
//
// A Plan maps every CostGraph node to a device and (optionally) a stage, and
// carries the objective, the lower bound the algorithm proved, and per-device
// usage. Every partitioner returns a Plan; the validator, evaluator, writer
// and reports consume Plans only.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_PLAN_H
#define ONNXP_IR_PLAN_H

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace onnxp {

/// Load and memory of one device under a plan (seed 004 §3: an accelerator's
/// load is incoming transfers + processing + outgoing transfers).
struct DeviceUsage {
  double compute = 0;
  double commIn = 0;
  double commOut = 0;
  double load = 0;   ///< what the objective sees for this device
  double memory = 0; ///< bytes held
};

struct Plan {
  std::string algorithm;
  /// What `objective` measures: "max-load" (time per sample), "latency",
  /// "makespan", "period", ...
  std::string objectiveKind = "max-load";
  /// How the validator checks accelerator memory: "sum" (every node's
  /// memBytes held for the whole iteration) or "peak" (memory over time
  /// under the FIFO scheduler emulation of seed 003 Eq. (2), recomputed
  /// with emulateSchedule; pardnn).
  std::string memoryModel = "sum";
  int accelerators = 0;
  int cpus = 0;

  std::vector<int> device; ///< per CostGraph node: device id
  std::vector<int> stage;  ///< per CostGraph node: stage id, or empty
  /// Per device: how many accelerators run this device's nodes as
  /// data-parallel replicas (seed 004 App. C.2). Empty means one each; a
  /// device lent to another as a replica holds no node and has 0.
  std::vector<int> replicas;

  double objective = NAN;
  double lowerBound = NAN;
  double solveSeconds = 0;
  std::vector<DeviceUsage> usage; ///< per device, filled by the evaluator
  /// Algorithm-specific numbers for the report (ideals, nodes moved, ...).
  std::map<std::string, double> stats;
  /// Human-readable notes for the report (assumptions, fallbacks).
  std::vector<std::string> notes;

  double gap() const {
    if (std::isnan(objective) || std::isnan(lowerBound) || objective == 0)
      return NAN;
    return (objective - lowerBound) / std::fabs(objective);
  }
};

} // namespace onnxp

#endif // ONNXP_IR_PLAN_H
