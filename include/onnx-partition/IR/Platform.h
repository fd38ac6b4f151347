//===- IR/Platform.h - Devices, memory and links ----------------*- C++ -*-===//
//
// The machine a plan is made for: k accelerators and l CPU cores, accelerator
// memory, links, and the peak rates the analytical cost model uses. Device
// ids in a Plan are 0..k-1 for accelerators and k..k+l-1 for CPUs.
//
// Topology (issue 21): accelerators sit on `nodes` machines of
// `acceleratorsPerNode` each, numbered node-major (accelerator d is on node
// d / acceleratorsPerNode), so consecutive device ids share a node where
// they can. A transfer crosses one link (Platform::linkBetween): the peer
// link inside a node (NVLink/NVSwitch, or PCIe through the host when the
// machine has none), the network between nodes, the host link between an
// accelerator and CPU devices. Platform::transferMs is the one price every
// planner, evaluator and simulator uses for a transfer between two devices.
// Accelerators may be of several kinds (acceleratorKinds, in device order);
// Platform::nodeTimeMs is a node's time on a given device (seed 004 §3:
// p_v depends on the device it lands on).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_PLATFORM_H
#define ONNXP_IR_PLATFORM_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace onnxp {

/// What `calibrate` measured for one op kind (ONNX op type) on a device
/// (issue 23): the achieved fractions of the device's peak FLOP/s and
/// bandwidth, and its own per-kernel overhead.
struct OpKindEfficiency {
  double flopsEfficiency = 1;
  double bandwidthEfficiency = 1;
  double kernelOverheadMs = 0;
  int samples = 0; ///< profiled nodes the fit used (informational)
};

/// Peak rates of one device kind, for the analytical cost model.
struct DeviceSpec {
  std::string name;            ///< e.g. "V100-SXM2-16GB"
  double peakFlops = 0;        ///< FLOP/s
  double memBandwidth = 0;     ///< bytes/s
  double kernelOverheadMs = 0; ///< fixed cost per kernel launch
  double memoryBytes = kInfinity;
  /// Calibrated op kinds (platform file "opKinds"); an op kind not listed
  /// runs at the peaks above.
  std::map<std::string, OpKindEfficiency> opKinds;
  /// Dense tensor-core peaks of matrix ops (MatMul, Gemm, Conv, fused
  /// attention) under --precision tf32, bf16, fp16 (issue 33; datasheets in
  /// docs/cost-model.md), FLOP/s; 0: no tensor cores for it (peakFlops).
  double tf32Flops = 0;
  double bf16Flops = 0;
  double fp16Flops = 0;
};

/// The link a transfer crosses (Platform::linkBetween).
enum class LinkKind { Local, Peer, Network, Host };
const char *linkKindName(LinkKind K);

/// One kind of accelerator of a mixed platform and how many of it.
struct AcceleratorKind {
  DeviceSpec spec;
  int count = 0;
};
/// Most accelerator kinds one platform may mix (the DP keeps a sum per kind).
constexpr int kMaxAcceleratorKinds = 4;

struct Platform {
  std::string name = "default";
  int accelerators = 1; ///< k
  int cpus = 0;         ///< l
  DeviceSpec accelerator;
  DeviceSpec cpu;
  double hostLinkBandwidth = 12e9; ///< accelerator <-> host, bytes/s
  double hostLinkLatencyMs = 0.01;
  /// Accelerator <-> accelerator inside a node, bytes/s. The struct's
  /// default is the host link's (GPU-to-GPU through host RAM, the seed 004
  /// §3 model of one link); the presets set NVLink/NVSwitch figures.
  double peerLinkBandwidth = 12e9;
  double peerLinkLatencyMs = 0.01;
  bool overlapComm = false; ///< seed 004 App. C.1
  /// With overlapComm: in- and out-transfers use separate channels, so the
  /// load is max(in, compute, out) instead of max(compute, in + out).
  bool fullDuplex = false;
  int nodes = 1;                  ///< machines; accelerators numbered node-major
  int acceleratorsPerNode = 0;    ///< 0: every accelerator on one node
  double networkBandwidth = 25e9; ///< between nodes, per accelerator, bytes/s
  double networkLatencyMs = 0.005;
  /// Mixed platforms: the accelerator kinds in device order (counts sum to
  /// `accelerators`); empty: every accelerator is `accelerator`, which is
  /// also the kind node times (CostNode::accTime) were estimated for.
  std::vector<AcceleratorKind> acceleratorKinds;
  /// Mixed platforms: the kind index of each accelerator when the device
  /// order is not the runs of acceleratorKinds (dp tries other orders of the
  /// same kinds: Partition/dp/KindOrders.h); empty: the runs.
  std::vector<int> deviceKinds;

  /// Memory of one accelerator; on a mixed platform the smallest kind's
  /// (planners that take one capacity stay safe on every device).
  double accMemory() const;
  /// Memory of device D (kInfinity for CPUs).
  double memoryOf(int D) const;
  int numDevices() const { return accelerators + cpus; }
  bool isAccelerator(int D) const { return D >= 0 && D < accelerators; }
  bool isCpu(int D) const { return D >= accelerators && D < numDevices(); }
  /// "acc0".."acc{k-1}", "cpu0".."cpu{l-1}".
  std::string deviceName(int D) const;
  /// Inverse of deviceName, or -1.
  int deviceIndex(const std::string &Name) const;
  /// Time to move Bytes between an accelerator and host RAM.
  double hostTransferMs(double Bytes) const;

  // --- topology (issue 21) ---
  /// Node of accelerator D (CPU devices: 0, the host of the seed's single
  /// machine).
  int nodeOf(int D) const;
  bool multiNode() const { return nodes > 1; }
  /// The link a transfer from device A to device B crosses.
  LinkKind linkBetween(int A, int B) const;
  /// Latency + Bytes / bandwidth of link kind K (0 for Local or no bytes).
  double linkMs(LinkKind K, double Bytes) const;
  /// THE price of one transfer from device A to device B. Bytes is the
  /// tensor's size, EdgeMs the time the cost graph gives it (CostEdge::
  /// commTime, the seed 004 §3 c_u over the host link): latency + bytes /
  /// bandwidth of the link crossed for analytically priced edges. Inputs that
  /// carry no byte size (JSON workloads) keep EdgeMs on every link: the
  /// papers' model of one uniform link. CPU to CPU transfers are free (seed
  /// 004 §3).
  double transferMs(int A, int B, double Bytes, double EdgeMs) const;
  /// The same over link kind K. With a byte size the edge's time is scaled
  /// by linkMs(K, Bytes) / hostTransferMs(Bytes): exactly linkMs for edges
  /// the analytical model priced, proportional for edges with their own
  /// (profiled, overridden, synthetic) times.
  double priceOnLink(LinkKind K, double Bytes, double EdgeMs) const;
  /// A factor no link's price of any edge falls below, relative to the edge's
  /// own time (the exact reductions compare transfers against it).
  double minLinkPriceRatio() const;

  // --- mixed devices (issue 21) ---
  bool mixed() const { return !acceleratorKinds.empty(); }
  /// Kind index of accelerator D (0 when not mixed).
  int kindOf(int D) const;
  int numKinds() const { return mixed() ? static_cast<int>(acceleratorKinds.size()) : 1; }
  const DeviceSpec &specOf(int D) const;
  /// Time of node N on device D: cpuTime on a CPU, accTime on an accelerator
  /// of the reference kind, else accTime rescaled by the roofline of N's
  /// FLOPs and bytes on D's kind (by peak FLOP/s when N carries neither).
  double nodeTimeMs(const CostNode &N, int D) const;
  /// The same for accelerator kind index Kind.
  double nodeTimeOnKind(const CostNode &N, int Kind) const;
  /// Whether every accelerator prices nodes alike.
  bool uniformDevices() const;
  /// One line describing nodes, devices per node and links (run summary).
  std::string describeTopology() const;
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
  int nodes = -1; ///< --nodes; -1: keep
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

/// Refuses a platform larger than the caps (issue 39 item 3): kMaxDevices
/// accelerators in all (also nodes x acceleratorsPerNode and the sum of the
/// acceleratorKinds counts), kMaxDevices CPU cores and nodes,
/// kMaxAcceleratorKinds kinds. One message states every cap.
Error checkPlatformSizes(const Platform &P, const std::string &Where);

/// Completes and checks the topology (checkPlatformSizes first and last): nodes without acceleratorsPerNode
/// split the accelerators evenly; more accelerators than the nodes hold add
/// nodes; mixed kinds must count every accelerator.
Error checkTopology(Platform &P, const std::string &Where);

/// Parses "16GiB", "512MB", "1e9", "2.5 GB" into bytes.
Expected<double> parseByteSize(const std::string &Text);

} // namespace onnxp

#endif // ONNXP_IR_PLATFORM_H
