//===- IR/PiperInstance.h - Piper's planning problem and its plans -*- C++ -*-===//
//
// The problem of Piper (Tarnawski, Narayanan, Phanishayee, NeurIPS 2021, §3
// "Problem Setup"), as its input JSON states it (workloads/piper/*.json): a
// DAG of layers, each with tensor-model-parallel configurations (TMPCs) per
// tensor-parallel degree t, and a plan: contiguous stages, each with a
// data-parallel degree d, a degree t and one TMPC per layer. Units are the
// file's: seconds per sample, bytes, bytes per second.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_PIPERINSTANCE_H
#define ONNXP_IR_PIPERINSTANCE_H

#include <map>
#include <string>
#include <vector>

namespace onnxp {

/// One TMPC of a layer at one degree t (§3: p, w, a, b, c^fw, c^bw).
struct PiperTmpc {
  std::string id;           ///< "vanilla", "activation recomp", ...
  double timePerSample = 0; ///< p: forward + backward seconds per sample
  double parameterSize = 0; ///< w: bytes the data-parallel resync moves
  double memoryA = 0;       ///< a: bytes per micro-batch in flight
  double memoryB = 0;       ///< b: bytes regardless of micro-batches
  /// c^fw per incoming edge and c^bw per outgoing edge, by the other
  /// end's node index (not its file id).
  std::map<int, double> syncFw, syncBw;
};

struct PiperLayer {
  long fileId = 0;
  std::string name;
  /// TMPCs by tensor-parallel degree t.
  std::map<int, std::vector<PiperTmpc>> tmpcs;
};

struct PiperEdge {
  int from = 0, to = 0; ///< node indices
  double bytes = 0;     ///< c(u, v)
};

struct PiperInstance {
  double maxMemoryPerDevice = 0; ///< M, bytes
  int maxDevices = 0;            ///< K
  double bandwidth = 0;          ///< bytes per second from each device
  int mbsInBatch = 0;            ///< N: micro-batches in a batch
  std::vector<PiperLayer> layers;
  std::vector<PiperEdge> edges;
};

/// The layers in a topological order, the smallest index first among those
/// ready; empty when the edges have a cycle.
std::vector<int> piperTopologicalOrder(const PiperInstance &I);

/// One stage of a plan: its layers (node indices), degrees and, per layer
/// in the same order, the index of its TMPC in layers[v].tmpcs[t].
struct PiperStage {
  std::vector<int> layers;
  int dataParallel = 1;
  int tensorParallel = 1;
  std::vector<int> tmpc;
};

/// Stages from the pipeline's first (inputs) to its last.
struct PiperPlan {
  std::vector<PiperStage> stages;
};

} // namespace onnxp

#endif // ONNXP_IR_PIPERINSTANCE_H
