//===- Transforms/OrtLayerAssignment.cpp - Placement as ORT session options ---===//
#include "onnx-partition/Transforms/OrtLayerAssignment.h"

#include <map>

using namespace onnxp;

OrtDevice onnxp::ortDeviceFor(const std::string &Name, int LocalId) {
  OrtDevice D;
  if (Name.rfind("acc", 0) == 0) {
    D.deviceId = LocalId >= 0 ? LocalId : std::stoi(Name.substr(3));
    D.designator = "gpu:" + std::to_string(D.deviceId);
    D.executionProvider = "CUDAExecutionProvider";
  } else {
    D.designator = "cpu";
    D.executionProvider = "CPUExecutionProvider";
  }
  return D;
}

std::string onnxp::ortLayerAssignmentSettings(const std::vector<std::string> &Devices,
                                              const std::vector<int> &LocalIds) {
  // Designators in first-use order, each with its exact-match annotations.
  std::vector<std::string> Order;
  std::map<std::string, std::string> Annotations;
  for (size_t I = 0; I < Devices.size(); ++I) {
    const std::string &Name = Devices[I];
    std::string Des = ortDeviceFor(Name, I < LocalIds.size() ? LocalIds[I] : -1).designator;
    auto [It, New] = Annotations.try_emplace(Des, "");
    if (New) Order.push_back(Des);
    It->second += (It->second.empty() ? "=" : ",=") + Name;
  }
  std::string S;
  for (const std::string &Des : Order) S += (S.empty() ? "" : ";") + Des + "(" + Annotations[Des] + ")";
  return S;
}

bool onnxp::fitsOneOrtSession(const std::vector<std::string> &Devices) {
  int Gpus = 0;
  for (const std::string &Name : Devices)
    Gpus += ortDeviceFor(Name).executionProvider != "CPUExecutionProvider";
  return Gpus <= 1;
}
