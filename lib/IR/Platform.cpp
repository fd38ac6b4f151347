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
    Presets[Name] = P;
  };
  // NVIDIA V100 SXM2 16 GB: 15.7 TFLOP/s fp32, 900 GB/s HBM2, PCIe 3 x16, NVLink 2.
  Add("v100", {"V100-SXM2-16GB", 15.7e12, 900e9, 0.005, 16 * GiB}, 12e9, 150e9);
  // NVIDIA A100 SXM4 40 GB: 19.5 TFLOP/s fp32, 1555 GB/s HBM2, PCIe 4 x16, NVLink 3.
  Add("a100", {"A100-SXM4-40GB", 19.5e12, 1555e9, 0.005, 40 * GiB}, 25e9, 300e9);
  // NVIDIA H100 SXM5 80 GB: 67 TFLOP/s fp32, 3.35 TB/s HBM3, PCIe 5 x16, NVLink 4.
  Add("h100", {"H100-SXM5-80GB", 67e12, 3350e9, 0.004, 80 * GiB}, 50e9, 450e9);
  // A server CPU socket treated as the "accelerator" kind (CPU-only runs):
  // 40 cores x 147.2 GFLOP/s, 204.8 GB/s DDR4-3200 x 8 channels.
  Add("cpu", {"Xeon-8380-socket", 5.888e12, 204.8e9, 0.002, 256 * GiB}, 204.8e9, 204.8e9);
  Presets["default"] = Presets["v100"];
  Presets["default"].name = "default";
  return Presets;
}

const std::map<std::string, Platform> &presets() {
  static const std::map<std::string, Platform> P = makePresets();
  return P;
}

Error readDevice(const nlohmann::json &J, DeviceSpec &D, const std::string &Where) {
  if (!J.is_object()) return makeError(Where, ": expected an object");
  for (auto &[Key, V] : J.items()) {
    std::string Field = Where + "." + Key;
    if (Key == "name" && V.is_string()) D.name = V.get<std::string>();
    else if (Key == "peakFlops" && V.is_number()) {
      D.peakFlops = V.get<double>();
      ONNXP_RETURN_IF_ERROR(checkedQuantity(D.peakFlops, /*AllowZero=*/false, Field));
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
    else return makeError(Where, ": unknown or mistyped field");
  }
  if (P.accelerators < 0 || P.cpus < 0 || P.numDevices() == 0)
    return makeError(NameOrFile, ": needs at least one device");
  return P;
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
  if (R.devices >= 0) Out.accelerators = R.devices;
  if (R.cpus >= 0) Out.cpus = R.cpus;
  if (!R.memory.empty()) {
    Expected<double> M = parseByteSize(R.memory);
    if (!M) return M.takeError().withContext("--memory");
    Out.accelerator.memoryBytes = *M;
  }
  if (R.overlapComm) Out.overlapComm = true;
  if (Out.numDevices() == 0) return makeUsageError("--devices and --cpus leave no device to place nodes on");
  return Out;
}
