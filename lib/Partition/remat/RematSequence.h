//===- Partition/remat/RematSequence.h - Plan summaries ---------*- C++ -*-===//
//
// What both activation DPs do with the operation sequence they rebuilt: the
// per-layer report (forward variant before the loss, recomputations after
// it, offloaded inputs) and the offloaded volume.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_REMAT_REMATSEQUENCE_H
#define ONNXP_PARTITION_REMAT_REMATSEQUENCE_H

#include "RematChain.h"

namespace onnxp::remat {

/// Fills Plan.layers and Plan.offloadedBytes from Plan.ops.
void finishPlan(const Chain &C, const SlotChain &S, RematPlan &Plan);

} // namespace onnxp::remat

#endif // ONNXP_PARTITION_REMAT_REMATSEQUENCE_H
