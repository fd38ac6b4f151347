//===- tools/onnx-partition/CostOptions.cpp - Cost-model flags ----------===//
//
// The flags that choose where node times come from (docs/cost-model.md):
// the analytical model for the --platform, an ONNX Runtime profile, a cost
// table, and the optimizer whose state memory accounting charges.
//
//===----------------------------------------------------------------------===//
#include "Options.h"

using namespace onnxp;
using namespace onnxp::tool;

void onnxp::tool::addCostOptions(CLI::App &App, ToolOptions &O) {
  App.add_option("--cost-model", O.costModel,
                 "How nodes are priced: analytical (FLOPs and bytes from shapes, roofline on the "
                 "--platform) or placeholder (bytes only)")
      ->check(CLI::IsMember({"analytical", "placeholder"}))
      ->group("Cost model");
  App.add_option("--cost-table", O.costTable,
                 "CSV or JSON table of per-node / per-op forward and backward ms and bytes; "
                 "overrides the analytical model")
      ->type_name("FILE")
      ->group("Cost model");
  App.add_option("--profile", O.profile,
                 "ONNX Runtime profile JSON (test/ort/profile.js); its kernel times override "
                 "the cost table and the analytical model")
      ->type_name("FILE")
      ->group("Cost model");
  App.add_option("--profile-device", O.profileDevice,
                 "Device kind the --profile times were measured on: acc (accelerator) or cpu (one core)")
      ->check(CLI::IsMember({"acc", "cpu"}))
      ->group("Cost model");
  App.add_option("--ort-optimizations", O.ortOptimizations,
                 "Price the graph ONNX Runtime runs at its default optimization level: all (constant "
                 "folding free, fused patterns one kernel) or none (every node a kernel, as with "
                 "graph optimizations disabled)")
      ->check(CLI::IsMember({"all", "none"}))
      ->group("Cost model");
  App.add_flag("--split-stateless-backward", O.splitStatelessBackward,
               "Training graphs: let the backward nodes of a forward node that reads no parameter run on "
               "another device than it (seed 004 colocates a forward node with its backward because "
               "they share weights; the tensors between them are then priced as transfers)")
      ->group("Cost model");
  App.add_option("--optimizer", O.optimizer,
                 "Optimizer whose state training memory accounting charges: sgd (none), momentum (1x "
                 "parameters), adam (2x)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->group("Cost model");
  App.add_option("--precision", O.precision,
                 "Price training or inference in this precision (issue 33): matrix ops at the platform's "
                 "tensor-core peak, tensors at its bytes, mixed-precision training memory (default: the "
                 "model's element types)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}))
      ->group("Cost model");
  App.add_option("--memory-model", O.partition.memoryModel,
                 "How accelerator memory is checked on ONNX models: liveness (a tensor is held from "
                 "its producer to its last reader on the device; default) or sum (every node's "
                 "outputs held all iteration, as seed 004's tables). JSON workloads always use sum")
      ->check(CLI::IsMember({"liveness", "sum"}))
      ->group("Cost model");
}
