//===- IR/PlanReplicas.cpp - Which accelerators run a device's replicas --===//
//
// See the header: a host d with r replicas runs them on d .. d+r-1.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/PlanReplicas.h"

using namespace onnxp;

bool onnxp::hasReplicas(const Plan &Pl) {
  for (int R : Pl.replicas)
    if (R > 1) return true;
  return false;
}

Expected<std::vector<std::vector<int>>> onnxp::replicaGroups(const Plan &Pl, int NumDevices,
                                                             const std::vector<std::string> &Name) {
  std::vector<std::vector<int>> Groups(NumDevices);
  if (Pl.replicas.empty()) return Groups;
  if (static_cast<int>(Pl.replicas.size()) != NumDevices)
    return makeInternalError("the plan gives replica counts for ", Pl.replicas.size(), " devices of ",
                             NumDevices);
  auto NameOf = [&](int D) {
    return D < static_cast<int>(Name.size()) ? Name[D] : "device " + std::to_string(D);
  };
  std::vector<int> Host(NumDevices, -1); // the host a lent device serves
  for (int D = 0; D < NumDevices; ++D) {
    const int R = Pl.replicas[D];
    if (R <= 1) continue;
    if (D + R > NumDevices)
      return makeError("the plan runs ", R, " replicas of ", NameOf(D), " but the platform has only ",
                       NumDevices - D,
                       " devices from it on (replicas run on the accelerators right after their host)");
    for (int K = 0; K < R; ++K) {
      const int Lent = D + K;
      if (K > 0 && Pl.replicas[Lent] != 0)
        return makeError("the plan runs ", R, " replicas of ", NameOf(D), " on ", NameOf(D), "..",
                         NameOf(D + R - 1), " but ", NameOf(Lent), " is not lent to it (it has ",
                         Pl.replicas[Lent], " replicas itself)");
      Host[Lent] = D;
      Groups[D].push_back(Lent);
    }
  }
  for (int D = 0; D < NumDevices; ++D)
    if (Pl.replicas[D] == 0 && Host[D] < 0)
      return makeError("the plan lends ", NameOf(D),
                       " as a replica (0 replicas) but no device before it runs replicas on it");
  return Groups;
}
