//===- API/PiperRecompute.h - Piper's recomputed layers in the model -*- C++ -*-===//
//
// Issue 34 item 3: where a piper plan recomputes a layer of an ONNX
// Runtime training graph (its "activation recomp" TMPC), the written model
// recomputes it: seed 001's recompute rewrite (Transforms/Recompute.h) with
// the activation schedule that choice stands for. Forward phase: F_all for
// a kept layer, F_ck for a recomputed one (only its input and the output
// the next layer reads stay); then the loss; backward phase, last layer
// first: F_all again (the copies "<node>/recompute1") before B^k for a
// recomputed layer, B^k alone otherwise. Private to API/PiperGraphStages.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_PIPERRECOMPUTE_H
#define ONNXP_API_PIPERRECOMPUTE_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Partition/piper/PiperGraphPlanner.h"
#include "onnx-partition/Transforms/Recompute.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

namespace onnxp {

struct PiperRecompute {
  onnx::ModelProto model;                    ///< the rewritten model (the input's when nothing is recomputed)
  RecomputeRewriteResult rewrite;            ///< what the rewrite added
  std::map<std::string, std::string> copyOf; ///< recomputed tensor -> the original it stands for
};

/// The model of G with Plan's recomputed layers rewritten (see above).
/// Model is G's ONNX model, Backward[i] whether its node i runs in the
/// backward (never recomputed); a plan that recomputes nothing returns the
/// model as is. A recomputed Dropout without a seed gets one, the same on
/// the original and its copies, so the copy draws the original's mask
/// (FNV-1a of the original's first output, 31 bits: the seed
/// tools/ort-runner gives an unseeded Dropout, so a run of the unpartitioned
/// model draws the same masks).
Expected<PiperRecompute> rewritePiperRecompute(const CostGraph &G, const onnx::ModelProto &Model,
                                               const PiperGraphRun &Run, const PiperGraphPlan &Plan,
                                               const std::vector<char> &Backward);

} // namespace onnxp

#endif // ONNXP_API_PIPERRECOMPUTE_H
