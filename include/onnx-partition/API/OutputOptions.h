//===- API/OutputOptions.h - What a run produces and where it goes -*- C++ -*-===//
//
// The output half of the tool's options, read by the library's output
// makers (API/Outputs.h) and file writers (API/WriteBack.h): the outputs
// section of CompileOptions, completed by outputOptionsFor (input,
// algorithm, solver limits, micro-batches) before the makers read it. A path names a file to write and, in
// the in-memory results, only appears in messages ("wrote X").
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_API_OUTPUTOPTIONS_H
#define ONNXP_API_OUTPUTOPTIONS_H

#include "onnx-partition/Partition/Partitioner.h"

#include <string>

namespace onnxp {

struct OutputOptions {
  std::string input;                    ///< the input's name in the summary and reports
  std::string algo = kDefaultAlgorithm; ///< --algo (the chain planner and the memory sweep run it)
  PartitionOptions partition;           ///< solver limits of the chain planner and the sweep
  std::string passes;                   ///< --passes, named in messages
  std::string output;                   ///< -o FILE: the annotated model
  std::string report;                   ///< --report FILE: the plan report JSON
  std::string trace;                    ///< --trace FILE: Chrome trace of the plan's schedule
  std::string memorySweep;              ///< --memory-sweep OUT.svg (pipeline-ilp)
  int sweepPoints = 6;                  ///< --sweep-points
  PipelineScheduleKind schedule = PipelineScheduleKind::None; ///< --schedule (API/ScheduleOutput.h)
  int microbatches = 0;           ///< --microbatches M for --schedule (0: not given; 8)
  int virtualStages = 2;          ///< --virtual-stages v of --schedule interleaved-1f1b
  bool timings = false;           ///< --timings: solve times in the report
  std::string emitStages;         ///< --emit-stages DIR
  std::string emitRecomputeCheck; ///< --emit-recompute-check FILE
  std::string dot;                ///< --dot FILE: the plan as a Graphviz picture
  std::string dotDetail = "auto"; ///< --dot-detail auto|groups|nodes (Transforms/GraphDot.h)
  bool stats = false;             ///< --stats
  bool verbose = false;           ///< -v
};

} // namespace onnxp

#endif // ONNXP_API_OUTPUTOPTIONS_H
