//===- API/PiperGraphStages.h - --emit-stages of a piper plan ---*- C++ -*-===//
//
// Issue 34 item 3: the stage models of `--algo piper`'s plan on an ONNX
// graph, tensor parallelism written out. Each stage's forward ONNX nodes
// (its layers') run on its accelerators; a stage of TP degree t > 1 is cut
// after each Megatron block's row projection into pieces, and each piece
// holding a block is written t times by Transforms/ShardTensorParallel.h
// (shard k on the stage's k-th accelerator; data-parallel replica r of it
// on the r-th group of t, as the planner lays stages out). The row
// projection's output is then t partial sums: pipeline.json's
// "tensor_parallel" lists, per all-reduce, the tensor, its partials, the
// shard stages that make them and "sum"; the runner (tools/ort-runner)
// sums them before any consumer runs. Pieces after a stage's last block
// run on its first accelerator. A forward model planned with --training
// gets its forward stages. A model with backward ONNX nodes (an ORT
// training graph) gets per stage a forward and a backward model (nodes
// reading a backward node's output run in the backward too), forward ones
// in stage order, then the backward ones last stage first, with each
// data-parallel replica's accumulated gradients listed as
// "reduced_gradients"; the layers the plan recomputes are rewritten first
// (PiperRecompute.h, seed 001's rewrite): their forward runs again in the
// backward model. A tensor-parallel stage of a training graph has its
// forward cut as above and its backward split: the nodes reading a shard's
// own tensors (activations, sliced parameters) per shard, the rest whole,
// a column layer's input gradient all-reduced; the sliced parameters and
// gradient buffers (graph inputs in ORT's graphs) are listed for the
// runner to cut and to concatenate (docs/output-format.md §4c). Its
// replicas, recomputation and -o annotations are usage errors. -o writes the
// model (recomputation rewritten) with the plan in ONNX IR 11's
// multi-device annotations.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_PIPERGRAPHSTAGES_H
#define ONNXP_API_PIPERGRAPHSTAGES_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Partition/piper/PiperGraphPlanner.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <string>

namespace onnxp {

/// Writes Plan's stage models and pipeline.json into Dir through Tx.
/// Returns the number of stage models.
Expected<int> writePiperGraphStages(const CostGraph &G, const OnnxModel &M, const PiperGraphRun &Run,
                                    const PiperGraphPlan &Plan, const PiperGraphOptions &PO,
                                    const std::string &Dir, OutputTransaction &Tx);

/// The model with Plan as ONNX IR 11 multi-device annotations
/// (Transforms/ShardingSpecs.h): one device configuration per stage, each
/// stage node's pipeline stage, the split projections' sharding specs.
Expected<onnx::ModelProto> annotatePiperGraphModel(const CostGraph &G, const OnnxModel &M,
                                                   const PiperGraphRun &Run, const PiperGraphPlan &Plan);

} // namespace onnxp

#endif // ONNXP_API_PIPERGRAPHSTAGES_H
