//===- Partition/ip/ClassMoves.h - Colocation classes moved whole -*- C++ -*-===//
//
// The bookkeeping the class-move searches share (IpPolish's warm-start
// polish, ClassPolish's incremental one): the colocation classes of a graph
// in order of their first node, with their memory and accelerator support,
// and the accelerator memory a placement uses as classes move. Each search
// passes its own capacity (IpPolish the smallest accelerator's, which is
// what the IP assumes; ClassPolish each device's own).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_IP_CLASSMOVES_H
#define ONNXP_LIB_PARTITION_IP_CLASSMOVES_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"

#include <map>
#include <vector>

namespace onnxp {

struct ClassMoves {
  std::map<int, int> index;              ///< G.classOf id -> class index
  std::vector<std::vector<int>> members; ///< per class, its nodes
  std::vector<double> bytes;             ///< per class, memBytes of its nodes
  std::vector<char> accOk;               ///< per class, every node runs on an accelerator
  std::vector<double> used;              ///< per device, memBytes placed on it (accelerators)

  ClassMoves(const CostGraph &G, const Platform &P, const std::vector<int> &Device)
      : used(P.numDevices(), 0) {
    const int N = static_cast<int>(G.numNodes());
    for (int V = 0; V < N; ++V) {
      auto [It, New] = index.try_emplace(G.classOf(V), static_cast<int>(members.size()));
      if (New) members.emplace_back();
      members[It->second].push_back(V);
    }
    bytes.assign(members.size(), 0);
    accOk.assign(members.size(), 1);
    for (size_t Cl = 0; Cl < members.size(); ++Cl)
      for (int V : members[Cl]) {
        bytes[Cl] += G.node(V).memBytes;
        accOk[Cl] &= G.node(V).accSupported;
      }
    for (int V = 0; V < N; ++V)
      if (P.isAccelerator(Device[V])) used[Device[V]] += G.node(V).memBytes;
  }

  int size() const { return static_cast<int>(members.size()); }

  /// Whether class Cl may go to device To when Freed bytes leave To at the
  /// same time (a swap), with Capacity bytes on an accelerator.
  bool fits(const Platform &P, int Cl, int To, double Freed, double Capacity) const {
    return !P.isAccelerator(To) || (accOk[Cl] && used[To] - Freed + bytes[Cl] <= Capacity * (1 + 1e-12));
  }

  /// Books class Cl's memory moving from device From to device To.
  void move(const Platform &P, int Cl, int From, int To) {
    if (P.isAccelerator(From)) used[From] -= bytes[Cl];
    if (P.isAccelerator(To)) used[To] += bytes[Cl];
  }
};

} // namespace onnxp

#endif // ONNXP_LIB_PARTITION_IP_CLASSMOVES_H
