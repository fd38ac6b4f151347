//===- IR/Platform.cpp - Platform presets, platform files, byte sizes ---===//
//
// Presets use vendor datasheet peaks (sources in docs/cost-model.md). A
// platform file is JSON with the same field names as the struct; fields it
// omits keep the values of the preset named by its optional "base" field.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/InputLimits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

using namespace onnxp;

std::string Platform::deviceName(int D) const {
  if (isAccelerator(D)) return "acc" + std::to_string(D);
  if (isCpu(D)) return "cpu" + std::to_string(D - accelerators);
  return "device" + std::to_string(D);
}

int Platform::deviceIndex(const std::string &Name) const {
  for (int D = 0; D < numDevices(); ++D)
    if (deviceName(D) == Name) return D;
  return -1;
}

double Platform::hostTransferMs(double Bytes) const {
  if (Bytes <= 0) return 0;
  return hostLinkLatencyMs + Bytes / hostLinkBandwidth * 1e3;
}

const char *onnxp::linkKindName(LinkKind K) {
  switch (K) {
  case LinkKind::Local: return "local";
  case LinkKind::Peer: return "peer";
  case LinkKind::Network: return "network";
  case LinkKind::Host: return "host";
  }
  return "?";
}

int Platform::nodeOf(int D) const {
  if (!isAccelerator(D) || nodes <= 1 || acceleratorsPerNode <= 0) return 0;
  return D / acceleratorsPerNode;
}

LinkKind Platform::linkBetween(int A, int B) const {
  if (A == B) return LinkKind::Local;
  bool AccA = isAccelerator(A), AccB = isAccelerator(B);
  if (!AccA && !AccB) return LinkKind::Local; // seed 004 §3: CPUs share RAM
  if (AccA != AccB) return LinkKind::Host;
  return nodeOf(A) == nodeOf(B) ? LinkKind::Peer : LinkKind::Network;
}

double Platform::linkMs(LinkKind K, double Bytes) const {
  if (Bytes <= 0) return 0;
  switch (K) {
  case LinkKind::Local: return 0;
  case LinkKind::Peer: return peerLinkLatencyMs + Bytes / peerLinkBandwidth * 1e3;
  case LinkKind::Network: return networkLatencyMs + Bytes / networkBandwidth * 1e3;
  case LinkKind::Host: return hostTransferMs(Bytes);
  }
  return 0;
}

double Platform::transferMs(int A, int B, double Bytes, double EdgeMs) const {
  return priceOnLink(linkBetween(A, B), Bytes, EdgeMs);
}

double Platform::priceOnLink(LinkKind K, double Bytes, double EdgeMs) const {
  if (K == LinkKind::Local) return 0;
  // No byte size (JSON workloads): the edge's own time on every link.
  if (!(Bytes > 0)) return EdgeMs;
  // The edge's time is its host-link price; another link scales it by the
  // ratio of the two links' prices for these bytes (exactly linkMs when the
  // edge was priced by the analytical model, which sets hostTransferMs).
  double Host = hostTransferMs(Bytes);
  return Host > 0 ? EdgeMs * (linkMs(K, Bytes) / Host) : EdgeMs;
}

double Platform::minLinkPriceRatio() const {
  // (lat_K + b / bw_K) / (lat_H + b / bw_H) >= min(lat_K / lat_H, bw_H / bw_K)
  // for every b > 0 (the mediant inequality).
  auto Floor = [&](double Lat, double Bw) {
    double R = hostLinkBandwidth / Bw;
    if (hostLinkLatencyMs > 0) R = std::min(R, Lat / hostLinkLatencyMs);
    return R;
  };
  double R = 1; // the host link itself
  if (accelerators > 1) R = std::min(R, Floor(peerLinkLatencyMs, peerLinkBandwidth));
  if (multiNode()) R = std::min(R, Floor(networkLatencyMs, networkBandwidth));
  return R;
}

double Platform::accMemory() const {
  if (!mixed()) return accelerator.memoryBytes;
  double M = kInfinity;
  for (const AcceleratorKind &K : acceleratorKinds) M = std::min(M, K.spec.memoryBytes);
  return M;
}

double Platform::memoryOf(int D) const { return isAccelerator(D) ? specOf(D).memoryBytes : kInfinity; }

int Platform::kindOf(int D) const {
  if (!mixed() || !isAccelerator(D)) return 0;
  if (static_cast<size_t>(D) < deviceKinds.size()) return deviceKinds[D];
  int Seen = 0;
  for (size_t K = 0; K < acceleratorKinds.size(); ++K) {
    Seen += acceleratorKinds[K].count;
    if (D < Seen) return static_cast<int>(K);
  }
  return static_cast<int>(acceleratorKinds.size()) - 1;
}

const DeviceSpec &Platform::specOf(int D) const {
  if (isCpu(D)) return cpu;
  return mixed() ? acceleratorKinds[kindOf(D)].spec : accelerator;
}

double Platform::nodeTimeOnKind(const CostNode &N, int Kind) const {
  if (!mixed() || Kind <= 0 || Kind >= numKinds()) return N.accTime;
  const DeviceSpec &Ref = accelerator, &On = acceleratorKinds[Kind].spec;
  // The roofline of the analytical model (Cost/Roofline) on both kinds; the
  // node's own time (analytical, profiled or overridden) is rescaled by it.
  auto Roof = [&](const DeviceSpec &S) {
    return std::max(N.flops / S.peakFlops, N.bytesAccessed / S.memBandwidth) * 1e3;
  };
  double RefRoof = Roof(Ref);
  double Ratio = RefRoof > 0 ? Roof(On) / RefRoof : Ref.peakFlops / On.peakFlops;
  // Kernel launches are a fixed cost per kernel on each kind (Cost/Roofline:
  // overhead + max(FLOPs / peak, bytes / bandwidth)), not a rate: only the
  // roofline part is rescaled. Rescaling the whole time priced a graph of
  // small kernels on the second kind by the bandwidth ratio of its launches,
  // and made every per-kind time depend on which kind came first.
  double Launches = std::min(N.accTime, N.kernels * Ref.kernelOverheadMs);
  double LaunchesOn = Ref.kernelOverheadMs > 0 ? Launches / Ref.kernelOverheadMs * On.kernelOverheadMs
                                               : N.kernels * On.kernelOverheadMs;
  return (N.accTime - Launches) * Ratio + LaunchesOn;
}

double Platform::nodeTimeMs(const CostNode &N, int D) const {
  if (isCpu(D)) return N.cpuTime;
  return nodeTimeOnKind(N, kindOf(D));
}

bool Platform::uniformDevices() const {
  for (const AcceleratorKind &K : acceleratorKinds)
    if (K.spec.peakFlops != accelerator.peakFlops || K.spec.memBandwidth != accelerator.memBandwidth)
      return false;
  return true;
}

std::string Platform::describeTopology() const {
  auto Bw = [](double B) { return formatNumber(B / 1e9) + " GB/s"; };
  std::string S = std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s") + " x " +
                  std::to_string(nodes > 1 ? acceleratorsPerNode : accelerators) + " accelerator" +
                  ((nodes > 1 ? acceleratorsPerNode : accelerators) == 1 ? "" : "s");
  if (mixed()) {
    S += " (";
    for (size_t K = 0; K < acceleratorKinds.size(); ++K)
      S += (K ? " + " : "") + std::to_string(acceleratorKinds[K].count) + " " + acceleratorKinds[K].spec.name;
    S += ")";
  } else {
    S += " (" + accelerator.name + ")";
  }
  if (cpus > 0) S += " + " + std::to_string(cpus) + " CPU core" + (cpus == 1 ? "" : "s");
  S += "; peer " + Bw(peerLinkBandwidth) + " + " + formatNumber(peerLinkLatencyMs) + " ms";
  if (nodes > 1) S += ", network " + Bw(networkBandwidth) + " + " + formatNumber(networkLatencyMs) + " ms";
  S += ", host " + Bw(hostLinkBandwidth) + " + " + formatNumber(hostLinkLatencyMs) + " ms";
  return S;
}

namespace {
constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

/// One server CPU core (Xeon Platinum 8380, 40 cores, 2.3 GHz base, two
/// AVX-512 FMA units: 2.3e9 * 2 units * 16 fp32 lanes * 2 FLOPs = 147.2
/// GFLOP/s per core). Bandwidth is the per-core fair share of the socket's
/// 8 channels of DDR4-3200 (204.8 GB/s / 40 cores), the rate a core gets
/// when all cores stream at once. Sources: docs/cost-model.md.
DeviceSpec serverCpuCore() { return {"Xeon-8380-core", 147.2e9, 5.12e9, 0.002, kInfinity}; }

std::map<std::string, Platform> makePresets() {
  std::map<std::string, Platform> Presets;
  auto Add = [&](const std::string &Name, DeviceSpec Acc, double HostBw, double PeerBw) {
    Platform P;
    P.name = Name;
    P.accelerator = std::move(Acc);
    P.cpu = serverCpuCore();
    P.hostLinkBandwidth = HostBw;
    P.peerLinkBandwidth = PeerBw;
    P.peerLinkLatencyMs = 0.005;
    Presets[Name] = P;
  };
  // NVIDIA V100 SXM2 16 GB: 15.7 TFLOP/s fp32, 900 GB/s HBM2, PCIe 3 x16, NVLink 2.
  Add("v100", {"V100-SXM2-16GB", 15.7e12, 900e9, 0.005, 16 * GiB}, 12e9, 150e9);
  // Issue 33, dense tensor-core peaks (datasheets, docs/cost-model.md): V100
  // fp16 125 TFLOP/s (no tf32, no bf16); A100 tf32 156, bf16/fp16 312; H100
  // SXM5 tf32 495, bf16/fp16 989 (the sparse figures are twice these).
  Presets["v100"].accelerator.fp16Flops = 125e12;
  // NVIDIA A100 SXM4 40 GB: 19.5 TFLOP/s fp32, 1555 GB/s HBM2, PCIe 4 x16, NVLink 3.
  Add("a100", {"A100-SXM4-40GB", 19.5e12, 1555e9, 0.005, 40 * GiB}, 25e9, 300e9);
  auto A100TensorCores = [](DeviceSpec &D) {
    D.tf32Flops = 156e12;
    D.bf16Flops = D.fp16Flops = 312e12;
  };
  A100TensorCores(Presets["a100"].accelerator);
  // NVIDIA H100 SXM5 80 GB: 67 TFLOP/s fp32, 3.35 TB/s HBM3, PCIe 5 x16, NVLink 4.
  Add("h100", {"H100-SXM5-80GB", 67e12, 3350e9, 0.004, 80 * GiB}, 50e9, 450e9);
  Presets["h100"].accelerator.tf32Flops = 495e12;
  Presets["h100"].accelerator.bf16Flops = Presets["h100"].accelerator.fp16Flops = 989e12;
  // A server CPU socket treated as the "accelerator" kind (CPU-only runs):
  // 40 cores x 147.2 GFLOP/s, 204.8 GB/s DDR4-3200 x 8 channels.
  Add("cpu", {"Xeon-8380-socket", 5.888e12, 204.8e9, 0.002, 256 * GiB}, 204.8e9, 204.8e9);
  Presets["default"] = Presets["v100"];
  Presets["default"].name = "default";

  // Machines users rent (issue 21): one node of 8 (or 4) GPUs; --nodes N
  // stacks N of them over the network. Per-direction bandwidths; sources in
  // docs/cost-model.md.
  auto Machine = [&](const std::string &Name, const std::string &Gpu, int PerNode, double PeerBw,
                     double PeerLatMs, double NetBw, double NetLatMs) {
    Platform P = Presets.at(Gpu);
    P.name = Name;
    P.accelerators = PerNode;
    P.acceleratorsPerNode = PerNode;
    P.peerLinkBandwidth = PeerBw;
    P.peerLinkLatencyMs = PeerLatMs;
    P.networkBandwidth = NetBw;
    P.networkLatencyMs = NetLatMs;
    return P;
  };
  // DGX-1 with V100 32 GB: NVLink 2 hybrid cube-mesh, 50 GB/s per direction
  // between linked GPUs (2 bricks); 4x 100 Gb/s EDR InfiniBand for 8 GPUs
  // (6.25 GB/s per GPU).
  Presets["dgx-v100"] = Machine("dgx-v100", "v100", 8, 50e9, 0.005, 6.25e9, 0.005);
  Presets["dgx-v100"].accelerator.name = "V100-SXM2-32GB";
  Presets["dgx-v100"].accelerator.memoryBytes = 32 * GiB;
  // DGX A100 80 GB: NVSwitch 600 GB/s bidirectional (300 per direction);
  // 8x 200 Gb/s HDR InfiniBand, one per GPU (25 GB/s); A100 80 GB has
  // 2039 GB/s HBM2e.
  Presets["dgx-a100"] = Machine("dgx-a100", "a100", 8, 300e9, 0.003, 25e9, 0.005);
  Presets["dgx-a100"].accelerator = {"A100-SXM4-80GB", 19.5e12, 2039e9, 0.005, 80 * GiB};
  A100TensorCores(Presets["dgx-a100"].accelerator);
  // DGX H100: NVSwitch 900 GB/s bidirectional (450 per direction); 8x
  // 400 Gb/s NDR InfiniBand (50 GB/s per GPU).
  Presets["dgx-h100"] = Machine("dgx-h100", "h100", 8, 450e9, 0.003, 50e9, 0.005);
  // Four A100 80 GB PCIe cards without NVLink bridges: peer transfers go
  // over PCIe 4 x16 through the host (25 GB/s, the host link's latency);
  // 100 Gb/s Ethernet between such servers (12.5 GB/s per node, shared).
  Presets["pcie-4x-a100"] = Machine("pcie-4x-a100", "a100", 4, 25e9, 0.01, 12.5e9 / 4, 0.02);
  Presets["pcie-4x-a100"].accelerator = {"A100-PCIe-80GB", 19.5e12, 1935e9, 0.005, 80 * GiB};
  A100TensorCores(Presets["pcie-4x-a100"].accelerator);
  Presets["pcie-4x-a100"].hostLinkLatencyMs = 0.01;
  return Presets;
}

const std::map<std::string, Platform> &presets() {
  static const std::map<std::string, Platform> P = makePresets();
  return P;
}

/// "opKinds": {"Conv": {"flopsEfficiency": .., "bandwidthEfficiency": ..,
/// "kernelOverheadMs": .., "samples": ..}, ...}, as calibrate writes it.
Error readOpKinds(const nlohmann::json &J, DeviceSpec &D, const std::string &Where) {
  for (auto &[Kind, KV] : J.items()) {
    std::string KWhere = Where + "." + Kind;
    if (!KV.is_object()) return makeError(KWhere, ": expected an object");
    OpKindEfficiency E;
    E.kernelOverheadMs = D.kernelOverheadMs;
    for (auto &[Key, V] : KV.items()) {
      if (!V.is_number()) return makeError(KWhere, ".", Key, ": expected a number");
      double X = V.get<double>();
      if (Key == "flopsEfficiency" || Key == "bandwidthEfficiency") {
        ONNXP_RETURN_IF_ERROR(checkedQuantity(X, /*AllowZero=*/false, KWhere + "." + Key));
        // Issue 37, item 7: a fraction of the device's peak; no kernel beats it.
        if (X > 1)
          return makeError(KWhere, ".", Key, ": ", X,
                           " is above 1 (a fraction of the device's peak, which no kernel beats)");
        (Key == "flopsEfficiency" ? E.flopsEfficiency : E.bandwidthEfficiency) = X;
      } else if (Key == "kernelOverheadMs") {
        ONNXP_RETURN_IF_ERROR(checkedQuantity(X, /*AllowZero=*/true, KWhere + "." + Key));
        E.kernelOverheadMs = X;
      } else if (Key == "samples") {
        Expected<int> N = checkedCount(X, 0, 1 << 30, KWhere + ".samples");
        if (!N) return N.takeError();
        E.samples = *N;
      } else return makeError(KWhere, ": unknown field '", Key, "'");
    }
    D.opKinds[Kind] = E;
  }
  return Error::success();
}

Error readDevice(const nlohmann::json &J, DeviceSpec &D, const std::string &Where) {
  if (!J.is_object()) return makeError(Where, ": expected an object");
  for (auto &[Key, V] : J.items()) {
    std::string Field = Where + "." + Key;
    if (Key == "name" && V.is_string()) D.name = V.get<std::string>();
    else if (Key == "peakFlops" && V.is_number()) {
      D.peakFlops = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(D.peakFlops, /*AllowZero=*/false, Field));
    } else if ((Key == "tf32Flops" || Key == "bf16Flops" || Key == "fp16Flops") && V.is_number()) {
      // Issue 33: tensor-core peaks; 0 says the device has none for it.
      double &Peak = Key == "tf32Flops" ? D.tf32Flops : Key == "bf16Flops" ? D.bf16Flops : D.fp16Flops;
      Peak = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(Peak, /*AllowZero=*/true, Field));
    } else if (Key == "memBandwidth" && V.is_number()) {
      D.memBandwidth = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(D.memBandwidth, /*AllowZero=*/false, Field));
    } else if (Key == "kernelOverheadMs" && V.is_number()) {
      D.kernelOverheadMs = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(D.kernelOverheadMs, /*AllowZero=*/true, Field));
    } else if (Key == "memoryBytes") {
      if (V.is_number()) D.memoryBytes = V.get<double>();
      else if (V.is_string()) {
        Expected<double> B = parseByteSize(V.get<std::string>());
        if (!B) return B.takeError().withContext(Where + ".memoryBytes");
        D.memoryBytes = *B;
      } else return makeError(Where, ".memoryBytes: expected a number or size string");
      // Memory may be unbounded (1e300 or more stands for "no limit").
      if (!(D.memoryBytes > 0)) return makeError(Field, ": must be > 0, got ", D.memoryBytes);
    } else if (Key == "opKinds" && V.is_object()) {
      ONNXP_RETURN_IF_ERROR(readOpKinds(V, D, Field));
    } else return makeError(Where, ": unknown or mistyped field '", Key, "'");
  }
  return Error::success();
}
} // namespace

std::vector<std::string> onnxp::platformPresetNames() {
  std::vector<std::string> Names;
  for (auto &[Name, P] : presets()) Names.push_back(Name);
  return Names;
}

Expected<Platform> onnxp::loadPlatform(const std::string &NameOrFile) {
  auto It = presets().find(NameOrFile);
  if (It != presets().end()) return It->second;

  std::error_code EC;
  if (!std::filesystem::exists(NameOrFile, EC)) {
    std::string Names;
    for (const std::string &N : platformPresetNames()) Names += (Names.empty() ? "" : ", ") + N;
    return makeUsageError("--platform '", NameOrFile, "' is neither a preset (", Names,
                          ") nor a readable file");
  }
  // Read with the JSON inputs' size cap (issue 25: /dev/zero never ended).
  Expected<std::string> Text = readFile(NameOrFile, kMaxJsonInputBytes, "a platform file");
  if (!Text) return Text.takeError();
  return parsePlatform(*Text, NameOrFile);
}

Expected<Platform> onnxp::parsePlatform(const std::string &Text, const std::string &NameOrFile) {
  nlohmann::json J;
  try {
    J = nlohmann::json::parse(Text);
  } catch (const std::exception &Ex) { return makeError(NameOrFile, ": not valid JSON: ", Ex.what()); }
  if (!J.is_object()) return makeError(NameOrFile, ": a platform file holds a JSON object");
  Platform P = presets().at("default");
  if (J.contains("base")) {
    auto B = presets().find(J["base"].is_string() ? J["base"].get<std::string>() : "");
    if (B == presets().end()) return makeError(NameOrFile, ": unknown base preset");
    P = B->second;
  }
  P.name = NameOrFile;
  for (auto &[Key, V] : J.items()) {
    std::string Where = NameOrFile + ": " + Key;
    if (Key == "base") continue;
    if (Key == "name" && V.is_string()) P.name = V.get<std::string>();
    else if ((Key == "accelerators" || Key == "cpus") && V.is_number()) {
      // get<int>() would wrap 4294967298 to 2; check the value as a double.
      Expected<int> N = checkedCount(V.get<double>(), 0, kMaxDevices, Where);
      if (!N) return N.takeError();
      (Key == "accelerators" ? P.accelerators : P.cpus) = *N;
    } else if (Key == "accelerator") {
      ONNXP_RETURN_IF_ERROR(readDevice(V, P.accelerator, Where));
    } else if (Key == "cpu") {
      ONNXP_RETURN_IF_ERROR(readDevice(V, P.cpu, Where));
    } else if ((Key == "hostLinkBandwidth" || Key == "peerLinkBandwidth") && V.is_number()) {
      double B = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(B, /*AllowZero=*/false, Where));
      (Key == "hostLinkBandwidth" ? P.hostLinkBandwidth : P.peerLinkBandwidth) = B;
    } else if ((Key == "hostLinkLatencyMs" || Key == "peerLinkLatencyMs") && V.is_number()) {
      double L = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(L, /*AllowZero=*/true, Where));
      (Key == "hostLinkLatencyMs" ? P.hostLinkLatencyMs : P.peerLinkLatencyMs) = L;
    } else if (Key == "overlapComm" && V.is_boolean()) P.overlapComm = V.get<bool>();
    else if (Key == "fullDuplex" && V.is_boolean()) P.fullDuplex = V.get<bool>();
    else if ((Key == "nodes" || Key == "acceleratorsPerNode") && V.is_number()) {
      Expected<int> N = checkedCount(V.get<double>(), Key == "nodes" ? 1 : 0, kMaxDevices, Where);
      if (!N) return N.takeError();
      (Key == "nodes" ? P.nodes : P.acceleratorsPerNode) = *N;
    } else if (Key == "networkBandwidth" && V.is_number()) {
      P.networkBandwidth = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(P.networkBandwidth, /*AllowZero=*/false, Where));
    } else if (Key == "networkLatencyMs" && V.is_number()) {
      P.networkLatencyMs = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(P.networkLatencyMs, /*AllowZero=*/true, Where));
    } else if (Key == "acceleratorKinds" && V.is_array()) {
      P.acceleratorKinds.clear();
      if (V.empty() || V.size() > static_cast<size_t>(kMaxAcceleratorKinds))
        return makeError(Where, ": lists 1 to ", kMaxAcceleratorKinds, " kinds");
      for (size_t I = 0; I < V.size(); ++I) {
        std::string KWhere = Where + "[" + std::to_string(I) + "]";
        const nlohmann::json &JK = V[I];
        if (!JK.is_object() || !JK.contains("count") || !JK["count"].is_number())
          return makeError(KWhere, ": an object with a numeric 'count'");
        AcceleratorKind AK;
        AK.spec = P.accelerator;
        nlohmann::json Rest = JK;
        Rest.erase("count");
        if (JK.contains("preset")) {
          auto B = presets().find(JK["preset"].is_string() ? JK["preset"].get<std::string>() : "");
          if (B == presets().end()) return makeError(KWhere, ": unknown preset");
          AK.spec = B->second.accelerator;
          Rest.erase("preset");
        }
        ONNXP_RETURN_IF_ERROR(readDevice(Rest, AK.spec, KWhere));
        Expected<int> C = checkedCount(JK["count"].get<double>(), 1, kMaxDevices, KWhere + ".count");
        if (!C) return C.takeError();
        AK.count = *C;
        P.acceleratorKinds.push_back(AK);
      }
    } else return makeError(Where, ": unknown or mistyped field");
  }
  // Counts implied by the topology when the file does not give them.
  if (!J.contains("accelerators")) {
    if (!P.acceleratorKinds.empty()) {
      P.accelerators = 0;
      for (const AcceleratorKind &K : P.acceleratorKinds) P.accelerators += K.count;
    } else if (J.contains("nodes") && P.acceleratorsPerNode > 0) {
      P.accelerators = P.nodes * P.acceleratorsPerNode;
    }
  }
  if (P.mixed()) P.accelerator = P.acceleratorKinds.front().spec;
  if (P.accelerators < 0 || P.cpus < 0 || P.numDevices() == 0)
    return makeError(NameOrFile, ": needs at least one device");
  ONNXP_RETURN_IF_ERROR(checkTopology(P, NameOrFile));
  return P;
}

Error onnxp::checkPlatformSizes(const Platform &P, const std::string &Where) {
  // Issue 39 item 3: per-field caps (kMaxDevices each) still let nodes x
  // acceleratorsPerNode or the kinds' counts reach millions of devices, which
  // ran for minutes and ended in bad_alloc. The totals are capped here, before
  // any planner sizes a per-device array, and the message states every cap.
  auto Refuse = [&](const std::string &What) {
    return makeUsageError(Where, ": ", What, "; onnx-partition accepts at most ", kMaxDevices,
                          " accelerators in all (--devices, nodes x acceleratorsPerNode, the sum of 1 to ",
                          kMaxAcceleratorKinds, " acceleratorKinds counts), ", kMaxDevices, " CPU cores and ",
                          kMaxDevices, " nodes");
  };
  int64_t Kinds = 0;
  for (const AcceleratorKind &K : P.acceleratorKinds) Kinds += K.count;
  const int64_t PerNode = P.acceleratorsPerNode > 0 ? P.acceleratorsPerNode : 0;
  const int64_t InNodes = static_cast<int64_t>(P.nodes) * PerNode;
  if (P.accelerators > kMaxDevices) return Refuse(std::to_string(P.accelerators) + " accelerators");
  if (InNodes > kMaxDevices && P.nodes > 1)
    return Refuse(std::to_string(P.nodes) + " nodes x " + std::to_string(PerNode) +
                  " accelerators = " + std::to_string(InNodes) + " accelerators");
  if (Kinds > kMaxDevices) return Refuse("acceleratorKinds count " + std::to_string(Kinds) + " accelerators");
  if (P.acceleratorKinds.size() > static_cast<size_t>(kMaxAcceleratorKinds))
    return Refuse(std::to_string(P.acceleratorKinds.size()) + " acceleratorKinds");
  if (P.cpus > kMaxDevices) return Refuse(std::to_string(P.cpus) + " CPU cores");
  if (P.nodes > kMaxDevices) return Refuse(std::to_string(P.nodes) + " nodes");
  return Error::success();
}

Error onnxp::checkTopology(Platform &P, const std::string &Where) {
  ONNXP_RETURN_IF_ERROR(checkPlatformSizes(P, Where));
  if (P.nodes > 1 && P.acceleratorsPerNode <= 0) {
    if (P.accelerators % P.nodes != 0)
      return makeUsageError(Where, ": ", P.accelerators, " accelerators do not split evenly over ", P.nodes,
                            " nodes; give acceleratorsPerNode");
    P.acceleratorsPerNode = P.accelerators / P.nodes;
  }
  // More accelerators than the nodes hold: more nodes of the same kind.
  if (P.acceleratorsPerNode > 0 && P.accelerators > P.nodes * P.acceleratorsPerNode)
    P.nodes = (P.accelerators + P.acceleratorsPerNode - 1) / P.acceleratorsPerNode;
  if (P.mixed()) {
    int Sum = 0;
    for (const AcceleratorKind &K : P.acceleratorKinds) Sum += K.count;
    if (Sum != P.accelerators)
      return makeUsageError(Where, ": acceleratorKinds count ", Sum, " accelerators but the platform has ",
                            P.accelerators);
  }
  return checkPlatformSizes(P, Where); // nodes may have grown above
}

Expected<double> onnxp::parseByteSize(const std::string &Text) {
  size_t Pos = 0;
  double Value;
  try {
    Value = std::stod(Text, &Pos);
  } catch (...) { return makeUsageError("'", Text, "' is not a size (examples: 16GiB, 512MB, 1e9)"); }
  std::string Unit;
  for (size_t I = Pos; I < Text.size(); ++I)
    if (!std::isspace(static_cast<unsigned char>(Text[I]))) Unit += static_cast<char>(std::tolower(Text[I]));
  static const std::map<std::string, double> Units = {
      {"", 1},         {"b", 1},           {"k", 1e3},   {"kb", 1e3},        {"m", 1e6},
      {"mb", 1e6},     {"g", 1e9},         {"gb", 1e9},  {"t", 1e12},        {"tb", 1e12},
      {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", GiB}, {"tib", GiB * 1024}};
  auto It = Units.find(Unit);
  if (It == Units.end() || !(Value >= 0) || std::isinf(Value))
    return makeUsageError("'", Text, "' is not a size (examples: 16GiB, 512MB, 1e9)");
  return Value * It->second;
}

Expected<Platform> onnxp::resolvePlatform(const PlatformRequest &R, const Platform *WorkloadPlatform) {
  Platform Out;
  bool PlatformGiven = R.platform != "default";
  if (WorkloadPlatform && !PlatformGiven) {
    Out = *WorkloadPlatform;
  } else {
    Expected<Platform> P = loadPlatform(R.platform);
    if (!P) return P.takeError();
    Out = *P;
    if (WorkloadPlatform) {
      Out.accelerators = WorkloadPlatform->accelerators;
      Out.cpus = WorkloadPlatform->cpus;
    }
  }
  if (R.nodes >= 1) {
    Out.nodes = R.nodes;
    if (Out.acceleratorsPerNode > 0 && R.devices < 0) Out.accelerators = R.nodes * Out.acceleratorsPerNode;
  }
  if (R.devices >= 0) Out.accelerators = R.devices;
  // --devices D --nodes N together: D accelerators spread over the N nodes,
  // D / N on each (the user asked for N machines; filling node 0 first would
  // leave the others empty), at most as many per node as the machine holds.
  if (R.nodes >= 1 && R.devices >= 1) {
    if (R.devices % R.nodes != 0)
      return makeUsageError("--devices ", R.devices, " do not split evenly over --nodes ", R.nodes);
    const int PerNode = R.devices / R.nodes;
    if (Out.acceleratorsPerNode > 0 && PerNode > Out.acceleratorsPerNode)
      return makeUsageError("--devices ", R.devices, " over --nodes ", R.nodes, " puts ", PerNode,
                            " accelerators on a node of platform '", Out.name, "', which holds ",
                            Out.acceleratorsPerNode);
    Out.acceleratorsPerNode = PerNode;
  }
  if (R.cpus >= 0) Out.cpus = R.cpus;
  if (!R.memory.empty()) {
    Expected<double> M = parseByteSize(R.memory);
    if (!M) return M.takeError().withContext("--memory");
    Out.accelerator.memoryBytes = *M;
  }
  if (R.overlapComm) Out.overlapComm = true;
  if (Out.numDevices() == 0) return makeUsageError("--devices and --cpus leave no device to place nodes on");
  // Issue 39, item 6: say where the too few accelerators come from (a
  // one-GPU preset) and what to give instead.
  if (R.nodes >= 1 && Out.accelerators < R.nodes)
    return makeUsageError("--nodes ", R.nodes, " needs at least one accelerator per node, but ",
                          R.devices >= 0 ? "--devices gives " : "platform '" + Out.name + "' describes ",
                          Out.accelerators, " accelerator", Out.accelerators == 1 ? "" : "s",
                          " in all; give --devices N with N a multiple of ", R.nodes,
                          ", or a machine preset such as dgx-a100 (8 GPUs per node)");
  ONNXP_RETURN_IF_ERROR(checkTopology(Out, "platform '" + Out.name + "'"));
  return Out;
}
