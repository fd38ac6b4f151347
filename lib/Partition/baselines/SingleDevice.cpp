//===- Partition/SingleDevice.cpp - The "single" baseline ---------------===//
#include "onnx-partition/Partition/baselines/Baselines.h"
#include "onnx-partition/Support/HumanUnits.h"

using namespace onnxp;

Expected<Plan> onnxp::partitionSingleDevice(const CostGraph &G, const Platform &P, const PartitionOptions &) {
  Plan Pl;
  Pl.device.assign(G.numNodes(), 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    if (G.node(V).accSupported && P.accelerators > 0) continue;
    if (P.cpus == 0)
      return makeError("node '", G.node(V).name,
                       "' cannot run on an accelerator and the platform has no CPU (use --cpus)");
    Pl.device[V] = P.accelerators;
  }
  if (P.accelerators == 0) Pl.device.assign(G.numNodes(), 0);
  // Colocation: a class with an unsupported member goes to the CPU whole.
  std::vector<int> ClassDev(G.numClasses(), -1);
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (Pl.device[V] != 0) ClassDev[G.classOf(V)] = Pl.device[V];
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (ClassDev[G.classOf(V)] >= 0) Pl.device[V] = ClassDev[G.classOf(V)];
  // Not fitting is the input's problem (a platform too small for the model),
  // not an invalid plan: say what would be needed (issue 16, item 5).
  double Bytes = 0;
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (P.isAccelerator(Pl.device[V])) Bytes += G.node(V).memBytes;
  if (P.accelerators > 0 && Bytes > P.accMemory() * (1 + 1e-9))
    return makeDoesNotFitError("single: the nodes it puts on acc0 need ", exactBytes(Bytes),
                               ", more than the accelerator's ", exactBytes(P.accMemory()),
                               "; give --memory ", wholeBytes(Bytes),
                               " or more, or use a partitioner (--algo dp)");
  return Pl;
}
