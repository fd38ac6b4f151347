//===- test/fuzz/FuzzChainPlanners.h - Chains through the chain planners -===//
//
// Shared by the chain-json, pipedream and piper harnesses (issue 25): a chain
// an importer accepts goes through the fast chain planners (PipeDream's
// straight pipeline, rotor, offload-activations, offload-weights) on two
// platforms. Any error is fine except an internal one: extreme but finite
// numbers must be refused at import or give a clear "no plan", never an
// overflow inside a planner (the heap overflow of PipeDream's backtrack).
// pipeline-ilp (CBC) is too slow per input; the CLI mutation script
// (chain_planner_mutations.py) runs it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_FUZZ_CHAINPLANNERS_H
#define ONNXP_FUZZ_CHAINPLANNERS_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Import/ChainJson.h"
#include "onnx-partition/Partition/Partitioner.h"

#include <cstdio>

namespace onnxp::fuzz {

inline void requireNotInternal(const Error &E) {
  if (E && E.kind() == Error::Kind::Internal) {
    std::fprintf(stderr, "%s\n", E.message().c_str());
    __builtin_trap();
  }
}

inline void planChain(const Chain &C) {
  // Round trip: what the chain writer writes must read back.
  Expected<Chain> Again = parseChainJson(chainToJson(C), "again.json");
  if (!Again) {
    std::fprintf(stderr, "%s\n", Again.takeError().message().c_str());
    __builtin_trap();
  }
  if (C.size() > 12) return; // keep every input fast
  Expected<Platform> Base = loadPlatform("a100");
  if (!Base) __builtin_trap();
  for (int Variant = 0; Variant < 2; ++Variant) {
    Platform P = *Base;
    P.accelerators = Variant ? 2 : 4;
    // The second platform's memory binds: a third of the chain's weights and
    // activations, so rotor and the offload planners have work to do.
    if (Variant) {
      double Bytes = C.totalWeightBytes() + C.inputBytes;
      for (const ChainBlock &B : C.blocks) Bytes += B.storedBytes;
      if (Bytes / 3 > 0) P.accelerator.memoryBytes = Bytes / 3;
    }
    PartitionOptions O;
    O.deadline = Deadline::forRun(SteadyClock::now(), 1, /*Given=*/false); // a limit the user did not choose
    O.threads = 1;
    for (const char *Algo : {"pipeline-pipedream", "rotor", "offload-activations", "offload-weights"}) {
      Expected<Plan> Pl = runChainPlanner(Algo, C, P, O);
      if (!Pl) requireNotInternal(Pl.takeError());
    }
  }
}

} // namespace onnxp::fuzz

#endif // ONNXP_FUZZ_CHAINPLANNERS_H
