//===- Transforms/OrtLayerAssignment.cpp - Placement as ORT session options ---===//
#include "onnx-partition/Transforms/OrtLayerAssignment.h"

#include <map>

using namespace onnxp;

OrtDevice onnxp::ortDeviceFor(const std::string &Name) {
  OrtDevice D;
  if (Name.rfind("acc", 0) == 0) {
    D.deviceId = std::stoi(Name.substr(3));
    D.designator = "gpu:" + std::to_string(D.deviceId);
    D.executionProvider = "CUDAExecutionProvider";
  } else {
    D.designator = "cpu";
    D.executionProvider = "CPUExecutionProvider";
  }
  return D;
}

std::string onnxp::ortLayerAssignmentSettings(const std::vector<std::string> &Devices) {
  // Designators in first-use order, each with its exact-match annotations.
  std::vector<std::string> Order;
  std::map<std::string, std::string> Annotations;
  for (const std::string &Name : Devices) {
    std::string Des = ortDeviceFor(Name).designator;
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
