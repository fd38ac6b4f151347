//===- Import/WorkloadImporter.h - seed 004's JSON workloads ----*- C++ -*-===//
//
// Reads the JSON DAG-with-costs format of workloads/msr/ (the inputs behind
// seed 004's Table 1). Importing bypasses the ONNX front end and the cost
// model so partitioners are comparable number-for-number with the paper.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_WORKLOADIMPORTER_H
#define ONNXP_IMPORT_WORKLOADIMPORTER_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

struct Workload {
  CostGraph graph;
  /// maxFPGAs, maxCPUs and maxSizePerFPGA from the file.
  Platform platform;
};

/// Whether Text looks like a workload file (a JSON object with "nodes" and
/// "edges" arrays), without validating it.
bool looksLikeWorkload(const std::string &Text);

/// Parses a workload; Path is used in messages.
Expected<Workload> parseWorkload(const std::string &Text, const std::string &Path);

/// Serializes a cost graph back to the workload format (ids = node index
/// unless the node has an externalId).
std::string writeWorkload(const CostGraph &G, const Platform &P);

} // namespace onnxp

#endif // ONNXP_IMPORT_WORKLOADIMPORTER_H
