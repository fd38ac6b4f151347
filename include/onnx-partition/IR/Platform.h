//===- IR/Platform.h - Devices, memory and links ----------------*- C++ -*-===//
//
// The machine a plan is made for: k accelerators and l CPU cores, accelerator
// memory, links, and the peak rates the analytical cost model uses. Device
// ids in a Plan are 0..k-1 for accelerators and k..k+l-1 for CPUs.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_PLATFORM_H
#define ONNXP_IR_PLATFORM_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

/// Peak rates of one device kind, for the analytical cost model.
struct DeviceSpec {
  std::string name;            ///< e.g. "V100-SXM2-16GB"
  double peakFlops = 0;        ///< FLOP/s
  double memBandwidth = 0;     ///< bytes/s
  double kernelOverheadMs = 0; ///< fixed cost per kernel launch
  double memoryBytes = kInfinity;
};

struct Platform {
  std::string name = "default";
  int accelerators = 1; ///< k
  int cpus = 0;         ///< l
  DeviceSpec accelerator;
  DeviceSpec cpu;
  double hostLinkBandwidth = 12e9; ///< accelerator <-> host, bytes/s
  double hostLinkLatencyMs = 0.01;
  double peerLinkBandwidth = 25e9; ///< accelerator <-> accelerator, bytes/s
  double peerLinkLatencyMs = 0.005;
  bool overlapComm = false; ///< seed 004 App. C.1
  /// With overlapComm: in- and out-transfers use separate channels, so the
  /// load is max(in, compute, out) instead of max(compute, in + out).
  bool fullDuplex = false;

  double accMemory() const { return accelerator.memoryBytes; }
  int numDevices() const { return accelerators + cpus; }
  bool isAccelerator(int D) const { return D >= 0 && D < accelerators; }
  bool isCpu(int D) const { return D >= accelerators && D < numDevices(); }
  /// "acc0".."acc{k-1}", "cpu0".."cpu{l-1}".
  std::string deviceName(int D) const;
  /// Inverse of deviceName, or -1.
  int deviceIndex(const std::string &Name) const;
  /// Time to move Bytes between an accelerator and host RAM.
  double hostTransferMs(double Bytes) const;
};

/// Names of the built-in presets.
std::vector<std::string> platformPresetNames();
/// A preset by name, or a JSON platform file (see docs/cost-model.md).
Expected<Platform> loadPlatform(const std::string &NameOrFile);

/// What the user says about the platform (--platform, --devices, --cpus,
/// --memory, --overlap-comm) on top of the input's own numbers.
struct PlatformRequest {
  std::string platform = "default"; ///< preset name or JSON file
  int devices = -1;                 ///< accelerators; -1: keep
  int cpus = -1;                    ///< CPU cores; -1: keep
  std::string memory;               ///< per accelerator, e.g. "16GiB"; empty: keep
  bool overlapComm = false;
};
/// The platform a run uses. Precedence: a workload's own platform (when
/// WorkloadPlatform is given) < --platform (presets have one accelerator
/// and no CPU; a platform file keeps its counts; a workload's counts win
/// over both) < --devices/--cpus/--memory/--overlap-comm. A platform with
/// no device at all is a usage error.
Expected<Platform> resolvePlatform(const PlatformRequest &R, const Platform *WorkloadPlatform);
/// Parses the text of a platform file; Name is used in messages and as the
/// default platform name.
Expected<Platform> parsePlatform(const std::string &Text, const std::string &Name);

/// Parses "16GiB", "512MB", "1e9", "2.5 GB" into bytes.
Expected<double> parseByteSize(const std::string &Text);

} // namespace onnxp

#endif // ONNXP_IR_PLATFORM_H
