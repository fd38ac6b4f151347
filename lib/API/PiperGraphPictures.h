//===- API/PiperGraphPictures.h - --dot and --trace of a piper plan -*- C++ -*-===//
//
// Issue 34: `--algo piper` on an ONNX model with --dot and --trace. The
// picture is Transforms/GraphDot.h's over the cost graph, each layer's
// nodes on its stage (filled with the colour of the stage's first
// accelerator), each stage's cluster saying its PP x DP x TP, accelerators
// and recomputed layers. The trace is the iteration simulator's replay that
// priced the plan (Partition/IterationTrace.h), every shard of a
// tensor-parallel stage drawn. Private to API/PiperGraphOutput.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_PIPERGRAPHPICTURES_H
#define ONNXP_API_PIPERGRAPHPICTURES_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/piper/PiperGraphPlanner.h"
#include "onnx-partition/Transforms/GraphDot.h"

#include <string>

namespace onnxp {

/// The picture of Pl, the best plan of Run on G.
std::string piperGraphDot(const CostGraph &G, const PiperGraphRun &Run, const PiperGraphPlan &Pl,
                          const Platform &P, DotOptions O);

/// The Chrome trace of Pl's iteration as the simulator replays it.
Expected<std::string> piperGraphTrace(const PiperGraphRun &Run, const PiperGraphPlan &Pl, const Platform &P,
                                      const PiperGraphOptions &PO);

} // namespace onnxp

#endif // ONNXP_API_PIPERGRAPHPICTURES_H
