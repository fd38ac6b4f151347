//===- tools/onnx-partition/OrtScripts.cpp - Running test/ort scripts ---===//
#include "OrtScripts.h"

#include "onnx-partition/Support/ChildProcess.h"

#include <cstdlib>
#include <vector>

using namespace onnxp;

#ifndef ONNXP_ORT_SCRIPTS_DIR
#define ONNXP_ORT_SCRIPTS_DIR "test/ort"
#endif

Error onnxp::tool::runOrtProfileScript(const std::string &Model, const std::string &Profile, int Runs,
                                       int Warmup, int Threads, const std::string &TmpDir) {
  const char *Env = std::getenv("ONNXP_ORT_SCRIPTS");
  std::string Script = std::string(Env && *Env ? Env : ONNXP_ORT_SCRIPTS_DIR) + "/profile.js";
  std::vector<std::string> Args = {"node",
                                   Script,
                                   Model,
                                   "-o",
                                   Profile,
                                   "--runs",
                                   std::to_string(Runs),
                                   "--warmup",
                                   std::to_string(Warmup),
                                   "--threads",
                                   std::to_string(Threads)};
  std::string Command;
  for (const std::string &A : Args) Command += (Command.empty() ? "" : " ") + A;
  std::vector<std::string> ChildEnv;
  if (!TmpDir.empty()) ChildEnv.push_back("TMPDIR=" + TmpDir); // profile.js's own temporary folder
  Expected<ChildExit> E = runChild(Args, ChildEnv);
  if (!E) return makeError("cannot run '", Command, "': is node (Node.js) on the PATH?");
  if (!E->exited || E->code != 0)
    return makeError("'", Command, "' failed (", E->exited ? "exit status " : "signal ",
                     E->exited ? E->code : E->signal,
                     "); run `bash tools/setup.sh deps` to install onnxruntime-node in test/ort");
  return Error::success();
}
