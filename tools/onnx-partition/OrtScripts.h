//===- tools/onnx-partition/OrtScripts.h - Running test/ort scripts -*- C++ -*-===//
//
// The one place the tool runs ONNX Runtime, through the Node.js scripts in
// test/ort (issue 26 may move them under tools/: re-point this file only).
// The folder is the source tree's test/ort unless ONNXP_ORT_SCRIPTS names
// another.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TOOLS_ORTSCRIPTS_H
#define ONNXP_TOOLS_ORTSCRIPTS_H

#include "onnx-partition/Pass/PassContext.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp::tool {

/// Writes the model with named nodes and bound dims (profile --emit-onnx).
Error emitNamedModel(const PassContext &Ctx, const std::string &Path);

/// Runs `node profile.js Model -o Profile --runs R --warmup W --threads T`
/// (Support/ChildProcess.h: a signal stops it too), its temporary files
/// under TmpDir when given; an error names the command when node is missing
/// or the script fails.
Error runOrtProfileScript(const std::string &Model, const std::string &Profile, int Runs, int Warmup,
                          int Threads, const std::string &TmpDir = "");

} // namespace onnxp::tool

#endif // ONNXP_TOOLS_ORTSCRIPTS_H
