//===- Partition/dp/IdealLattice.h - All ideals of a unit DAG ---*- C++ -*-===//
//
// The ideals (down-sets, seed 004 Def. 5.1) of the unit DAG and the covering
// relation between them: ideal J --u--> J + {u} for every unit u that can be
// added to J. The DP walks these edges, so it never hashes or compares sets.
//
// Ideals are enumerated without duplicates by the canonical tree in which an
// ideal's parent is the ideal minus its largest unit (the largest unit of an
// ideal is always maximal in it, units being topologically numbered). The
// non-tree edges are then found without any set lookup: for u < last(J),
//     J + {u} = (parent(J) + {u}) + {last(J)},
// and the right-hand side is a tree edge out of an ideal of J's size, whose
// own edge for u is resolved earlier (ideals are processed by size).
//
// Memory is O(ideals + lattice edges); enumeration stops with an error as
// soon as the count passes the limit, before anything large is allocated.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_DP_IDEALLATTICE_H
#define ONNXP_LIB_PARTITION_DP_IDEALLATTICE_H

#include "UnitGraph.h"

#include "onnx-partition/Support/Error.h"

#include <cstdint>
#include <vector>

namespace onnxp::dp {

struct IdealLattice {
  // Per ideal. Ideal 0 is the empty set; the full set is `full`.
  std::vector<int> parent; ///< canonical parent (-1 for the empty ideal)
  std::vector<int> last;   ///< largest unit in it (-1 for the empty ideal)
  std::vector<int> size;   ///< number of units
  // Covering edges of ideal J: [edgeBegin[J], edgeBegin[J+1]), sorted by unit.
  std::vector<uint32_t> edgeBegin;
  std::vector<int> edgeUnit, edgeTarget;
  int full = 0;

  size_t count() const { return parent.size(); }
  /// Ideals in order of size (every ideal after all of its subsets).
  std::vector<int> bySize() const;
  /// Units of ideal J, by walking the canonical parents.
  std::vector<int> unitsOf(int J) const;
};

/// Counts the ideals of UG; more than Limit is an error suggesting dpl.
Expected<size_t> countIdeals(const UnitGraph &UG, size_t Limit);
/// Enumerates the ideals and their covering edges (at most Limit ideals).
Expected<IdealLattice> buildIdealLattice(const UnitGraph &UG, size_t Limit);

} // namespace onnxp::dp

#endif // ONNXP_LIB_PARTITION_DP_IDEALLATTICE_H
