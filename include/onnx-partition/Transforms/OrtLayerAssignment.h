//===- Transforms/OrtLayerAssignment.h - Placement as ORT session options -*- C++ -*-===//
//
// What ONNX Runtime needs to run a partitioned model (DESIGN.md, "Facts
// about the output"; ORT's core/framework/layering_annotations.cc). The
// writer puts each node's device in its `layer_ann` metadata; ORT assigns
// nodes to execution providers from the session option
// `session.layer_assignment_settings` = `designator(ann,...);...`, where an
// annotation prefixed by `=` matches exactly and one without matches every
// `layer_ann` it is a prefix of (`acc1` would also take `acc10`). Designators
// are `cpu`, `gpu`, `gpu:N` (the GPU with device id N), `cuda`, ... One
// session runs the CPU and at most one GPU, so the annotated model runs in
// one session only on plans with at most one accelerator; any plan runs as
// one session per stage model (tools/ort-runner/run_pipeline.js).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TRANSFORMS_ORTLAYERASSIGNMENT_H
#define ONNXP_TRANSFORMS_ORTLAYERASSIGNMENT_H

#include <string>
#include <vector>

namespace onnxp {

/// How ONNX Runtime reaches one of our devices.
struct OrtDevice {
  std::string designator;        ///< "gpu:N" or "cpu"
  std::string executionProvider; ///< "CUDAExecutionProvider" or "CPUExecutionProvider"
  int deviceId = 0;              ///< CUDA device id (0 for the CPU)
};

/// Device names are the platform's: "acc<i>" (accelerator i, CUDA device i)
/// and "cpu<j>" (a core of the host: ORT's CPU provider).
/// LocalId >= 0: the accelerator's CUDA device id on its own node (issue 21:
/// on several nodes acc<i> is not GPU i of any machine).
OrtDevice ortDeviceFor(const std::string &DeviceName, int LocalId = -1);

/// `session.layer_assignment_settings` for a model whose nodes carry
/// `layer_ann` = one of Devices (only the used ones need be listed): one
/// entry per designator, every annotation with `=` (exact match), e.g.
/// "gpu:0(=acc0);cpu(=cpu0,=cpu1)".
/// LocalIds, when given, are the devices' CUDA ids on their nodes (same order).
std::string ortLayerAssignmentSettings(const std::vector<std::string> &Devices,
                                       const std::vector<int> &LocalIds = {});

/// Whether one ONNX Runtime session can honour the whole placement: at most
/// one GPU among Devices.
bool fitsOneOrtSession(const std::vector<std::string> &Devices);

} // namespace onnxp

#endif // ONNXP_TRANSFORMS_ORTLAYERASSIGNMENT_H
