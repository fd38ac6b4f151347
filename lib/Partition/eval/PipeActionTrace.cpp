//===- Partition/eval/PipeActionTrace.cpp - Action lists as trace and CSV -===//
//
// See PipeActions.h, drawPipeTimeline and pipeProgramCsv.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipeActions.h"

using namespace onnxp;

std::string onnxp::pipeActionLabel(const PipeAction &A) {
  return std::to_string(A.stage) + pipeActionName(A.kind) + std::to_string(A.micro);
}

void onnxp::drawPipeTimeline(const PipeProgram &P, const PipeTimeline &T, ChromeTrace &Trace,
                             const std::vector<std::string> &Names) {
  for (int D = 0; D < P.devices && D < static_cast<int>(T.actions.size()); ++D) {
    Trace.nameProcess(D, D < static_cast<int>(Names.size()) ? Names[D] : "device " + std::to_string(D));
    Trace.nameThread(D, 0, "compute");
    for (const PipeTimedAction &A : T.actions[D]) {
      const PipeAction &X = A.action;
      Trace.addSlice(D, 0, pipeActionLabel(X), pipeActionName(X.kind), A.start, A.end - A.start,
                     {{"stage", std::to_string(X.stage)}, {"micro-batch", std::to_string(X.micro)}});
    }
  }
}

std::string onnxp::pipeProgramCsv(const PipeProgram &P) {
  std::string Out;
  for (const std::vector<PipeAction> &List : P.actions) {
    for (size_t I = 0; I < List.size(); ++I) Out += (I ? "," : "") + pipeActionLabel(List[I]);
    Out += "\n";
  }
  return Out;
}
