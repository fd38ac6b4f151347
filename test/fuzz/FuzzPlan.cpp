//===- test/fuzz/FuzzPlan.cpp - libFuzzer: plans and their schedules ----===//
//
// A split is read against a graph and a platform; the fuzzer varies the file
// over a fixed 6-node graph (3 forward, 3 backward, two colocation classes)
// on 2 accelerators and 1 CPU. The same bytes are read as a chain planner's
// schedule (IR/ChainScheduleJson.h, the report's "schedule") of the kind
// they tell: what is read must write and read back to the same value.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/ChainScheduleJson.h"
#include "onnx-partition/Partition/io/PlanIO.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

using namespace onnxp;

namespace {
const CostGraph &graph() {
  static const CostGraph G = [] {
    CostGraph G;
    for (int I = 0; I < 6; ++I) {
      CostNode N;
      N.name = "n" + std::to_string(I);
      N.externalId = I;
      N.role = I < 3 ? Role::Forward : Role::Backward;
      N.colocClass = I % 2;
      N.accTime = 1 + I;
      N.cpuTime = 2 + I;
      G.addNode(N);
    }
    for (int I = 0; I + 1 < 6; ++I) G.addEdge({I, I + 1});
    return G;
  }();
  return G;
}

void fuzzSplit(const std::string &Text) {
  Platform P;
  P.accelerators = 2;
  P.cpus = 1;
  Expected<Plan> Pl = planFromSplitJson(Text, graph(), P);
  if (!Pl) {
    (void)Pl.takeError();
    return;
  }
  if (Pl->device.size() != graph().numNodes()) __builtin_trap();
  for (int D : Pl->device)
    if (D < 0 || D >= P.numDevices()) __builtin_trap();
}

void fuzzChainSchedule(const std::string &Text) {
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded()) return;
  std::optional<ChainScheduleKind> K = chainScheduleKindOf(J);
  if (!K) return;
  Expected<ChainSchedule> S = parseChainSchedule(*K, J);
  if (!S) {
    (void)S.takeError();
    return;
  }
  if (chainScheduleKind(*S) != *K) __builtin_trap();
  Expected<ChainSchedule> Back = parseChainSchedule(*K, chainScheduleToJson(*S));
  if (!Back || !(*Back == *S)) __builtin_trap();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  fuzzSplit(Text);
  fuzzChainSchedule(Text);
  return 0;
}
