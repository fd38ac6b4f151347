//===- tools/onnx-partition/OrtScripts.cpp - Running test/ort scripts ---===//
#include "OrtScripts.h"

#include <cstdlib>
#include <spawn.h>
#include <sys/wait.h>
#include <vector>

extern char **environ;

using namespace onnxp;

#ifndef ONNXP_ORT_SCRIPTS_DIR
#define ONNXP_ORT_SCRIPTS_DIR "test/ort"
#endif

Error onnxp::tool::runOrtProfileScript(const std::string &Model, const std::string &Profile, int Runs,
                                       int Warmup, int Threads) {
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
  std::vector<char *> Argv;
  for (std::string &A : Args) Argv.push_back(A.data());
  Argv.push_back(nullptr);
  pid_t Pid;
  // No shell: the paths are passed as they are.
  if (posix_spawnp(&Pid, "node", nullptr, nullptr, Argv.data(), environ) != 0)
    return makeError("cannot run '", Command, "': is node (Node.js) on the PATH?");
  int Status = 0;
  if (waitpid(Pid, &Status, 0) < 0 || !WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    return makeError("'", Command, "' failed (exit status ", WIFEXITED(Status) ? WEXITSTATUS(Status) : -1,
                     "); run `bash tools/setup.sh deps` to install onnxruntime-node in test/ort");
  return Error::success();
}
