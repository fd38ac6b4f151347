//===- Partition/baselines/Greedy.cpp - Topological memory fill (seed 004 §7) ===//
//
// The greedy baseline of seed 004 §7: contract colocation classes and the
// SCCs this creates (App. B, the DP's unit graph), fix a topological order,
// and give each accelerator in turn as many units as fit in its memory; the
// rest goes to the CPU. Times and transfers are ignored on purpose -- that
// is the point of the baseline. A unit that cannot run on an accelerator
// goes to the first CPU and the fill resumes on the next accelerator (so
// accelerators stay contiguous; the CPU may not be, hence the registry
// entry does not promise contiguity).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/baselines/Baselines.h"

#include "../dp/UnitGraph.h"

using namespace onnxp;

Expected<Plan> onnxp::partitionGreedy(const CostGraph &G, const Platform &P, const PartitionOptions &) {
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  dp::UnitGraph UG = dp::buildUnitGraph(G, /*Linearize=*/false);
  Plan Pl;
  Pl.device.assign(G.numNodes(), -1);
  Pl.stage.assign(G.numNodes(), 0);
  const int Cpu = P.cpus > 0 ? P.accelerators : -1;
  int Dev = 0, Stage = 0;
  double Used = 0;
  for (int U = 0; U < UG.numUnits(); ++U) {
    double Mem = 0;
    bool Supported = true;
    for (int V : UG.members[U]) {
      Mem += G.node(V).memBytes;
      Supported = Supported && G.node(V).accSupported;
    }
    int Target = -1;
    if (Supported) {
      // Next accelerator when this one is full (an empty one always takes
      // the unit if it fits at all).
      while (Dev < P.accelerators && Used > 0 && Used + Mem > P.accMemory()) {
        ++Dev;
        ++Stage;
        Used = 0;
      }
      if (Dev < P.accelerators && Mem <= P.accMemory()) Target = Dev;
    }
    if (Target < 0) {
      if (Cpu < 0) {
        Error E = makeError("greedy: unit holding node '", G.node(UG.members[U][0]).name,
                            Supported ? "' does not fit on any remaining accelerator"
                                      : "' cannot run on an accelerator",
                            " and the platform has no CPU (use --cpus)");
        return Supported ? E.withCause(Error::Cause::DoesNotFit) : E;
      }
      Target = Cpu;
      if (!Supported && Used > 0 && Dev < P.accelerators) {
        ++Dev; // keep each accelerator's set contiguous
        Used = 0;
      }
      ++Stage;
    } else {
      Used += Mem;
    }
    for (int V : UG.members[U]) {
      Pl.device[V] = Target;
      Pl.stage[V] = Stage;
    }
  }
  Pl.stage.clear(); // stages above are fill order, not a pipeline order
  return Pl;
}
