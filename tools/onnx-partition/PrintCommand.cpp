//===- tools/onnx-partition/PrintCommand.cpp - onnx-partition print ------===//
//
// Prints a model in the ONNX textual syntax (onnx/defs/printer.h) with each
// node's placement as a trailing comment, so golden tests can FileCheck
// where Transfer nodes land:
//   Y__to_acc1 = ai.onnx.partition.Transfer <...> (Y)   # acc1 stage 1
// Initializer values are summarized, not printed; the ONNX 1.12 printer does
// not know the IR v10 device fields, so they are shown from our reader.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/PipelinePatternWriteBack.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <onnx/defs/printer.h>

#include <iostream>
#include <map>

using namespace onnxp;
using namespace onnxp::tool;

namespace onnxp::tool {

int runPrint(int Argc, char **Argv) {
  CLI::App App{"Print a model in ONNX text syntax with each node's device and stage"};
  App.name("onnx-partition print");
  std::string Input;
  bool NoFunctions = false;
  std::string Binary;
  App.add_option("MODEL", Input, "ONNX model (binary or text syntax)")->type_name("FILE")->required();
  App.add_flag("--no-functions", NoFunctions, "Do not print the model-local functions");
  App.add_option("--binary", Binary,
                 "Also write the model unchanged as binary protobuf (feeds ONNX text models to runtimes)")
      ->type_name("OUT.onnx");
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;

  Expected<std::string> Text = readFile(Input);
  if (!Text) return reportError(Text.takeError());
  Expected<OnnxModel> M = loadOnnxModel(Input, *Text);
  if (!M) return reportError(M.takeError());
  const onnx::ModelProto &P = M->proto;
  if (!Binary.empty()) {
    std::string Data;
    if (!P.SerializeToString(&Data)) return reportError(makeError(Input, ": cannot serialize"));
    if (Error E = writeFileAtomically(Binary, Data)) return reportError(E);
  }
  std::optional<AnnotatedPlacement> Placement;
  if (hasPlacementAnnotations(P)) {
    Expected<AnnotatedPlacement> R = readPlacement(P);
    if (!R) return reportError(R.takeError().withContext(Input));
    Placement = std::move(*R);
  }

  std::ostream &OS = std::cout;
  OS << "<ir_version: " << P.ir_version() << ", opset_import: [";
  for (int I = 0; I < P.opset_import_size(); ++I)
    OS << (I ? ", " : "") << "\"" << P.opset_import(I).domain() << "\" : " << P.opset_import(I).version();
  OS << "]>\n";
  const onnx::GraphProto &G = P.graph();
  OS << G.name() << " " << G.input() << " => " << G.output() << "\n";
  if (G.initializer_size()) OS << "# " << G.initializer_size() << " initializers\n";
  if (std::string Period = modelMetadataValue(P, kPipelinePeriodKey); !Period.empty())
    OS << "# 1F1B period " << Period << " ms\n";
  OS << "{\n";
  for (int I = 0; I < G.node_size(); ++I) {
    OS << "  " << G.node(I);
    if (Placement) {
      const ModelPlacement &MP = Placement->placement;
      OS << "   # " << MP.deviceNames[MP.device[I]] << " stage " << MP.stage[I];
      // Issue 33, item 5: the devices its data-parallel replicas run on.
      if (MP.replicasOf(MP.device[I]).size() >= 2) OS << " replicas " << MP.replicaList(MP.device[I]);
    }
    // The ONNX 1.12 printer omits node domains; name the custom ones.
    if (!G.node(I).domain().empty()) OS << (Placement ? ", " : "   # ") << "domain " << G.node(I).domain();
    // A pipelined plan's place in its 1F1B period (PipelinePatternWriteBack.h).
    if (Expected<MetadataEntries> Meta = nodeMetadataProps(G.node(I))) {
      std::map<std::string, std::string> KV(Meta->begin(), Meta->end());
      if (KV.count(kPipelineTaskKey))
        OS << ", 1F1B " << KV[kPipelineTaskKey] << " start " << KV[kPipelineStartKey] << " ms shift "
           << KV[kPipelineShiftKey] << " order " << KV[kPipelineOrderKey];
    } else {
      (void)Meta.takeError();
    }
    OS << "\n";
  }
  OS << "}\n";
  if (!NoFunctions)
    for (const auto &F : P.functions()) OS << F << "\n";
  return 0;
}

} // namespace onnxp::tool
