//===- test/install/consumer/main.cpp - A program using the installed library ===//
//
// consumer MODEL DEVICES: partitions MODEL (dims N=8) with dp across DEVICES
// accelerators through Compiler.h alone and prints the objective, the
// number of annotated nodes and the stage count; exit 1 on an error.
//
//===----------------------------------------------------------------------===//
#include <onnx-partition/Compiler.h>

#include <cstdlib>
#include <iostream>

int main(int Argc, char **Argv) {
  if (Argc != 3) {
    std::cerr << "usage: consumer MODEL DEVICES\n";
    return 2;
  }
  onnxp::CompileOptions O;
  O.dims = {"N=8"};
  O.platform.devices = std::atoi(Argv[2]);
  O.algorithm = "dp";
  O.annotate = true;
  O.extractStages = true;
  onnxp::Expected<onnxp::CompileResult> R = onnxp::compile(Argv[1], O);
  if (!R) {
    std::cerr << "error: " << R.takeError().message() << "\n";
    return 1;
  }
  std::cout << "consumer: " << R->plan.algorithm << " " << onnxp::objectiveName(R->plan.objectiveKind) << " "
            << R->plan.objective << ", " << R->annotated->graph().node_size() << " annotated nodes, "
            << R->stages->stages.size() << " stages\n";
  return 0;
}
