//===- Support/ChildProcess.h - Programs the tool runs -------------*- C++ -*-===//
//
// `calibrate --measure` runs ONNX Runtime (node test/ort/profile.js) on a
// model it writes for the purpose. A signal that ends the tool meanwhile
// must not leave that child running or its files behind (issue 39, item 9):
// the child runs here, in a scratch folder of the tool's own, and the
// tool's signal handler stops and reaps the child, then removes the folder,
// before the signal's default action ends the tool.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_CHILDPROCESS_H
#define ONNXP_SUPPORT_CHILDPROCESS_H

#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

/// A folder of the run's own beside Target (".NAME.tmp-XXXXXX", made by
/// mkdtemp), removed with everything in it when destroyed or when SIGINT,
/// SIGTERM, SIGHUP or SIGQUIT ends the run. Beside Target, so a file
/// written in it can be renamed onto Target.
class ScratchDirectory {
public:
  static Expected<ScratchDirectory> createBeside(const std::string &Target);
  ScratchDirectory(ScratchDirectory &&Other) noexcept;
  ScratchDirectory &operator=(ScratchDirectory &&) = delete;
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;
  ~ScratchDirectory();
  const std::string &path() const { return Path; }

private:
  explicit ScratchDirectory(std::string P) : Path(std::move(P)) {}
  std::string Path;
};

/// How a child ended: its exit code, or the signal that ended it.
struct ChildExit {
  bool exited = false;
  int code = 0;   ///< exit code when exited
  int signal = 0; ///< else the signal
};

/// Runs Args (no shell; Args[0] is looked up on PATH) with Env's
/// "NAME=VALUE" entries replacing or joining the environment, and waits for
/// it. A handled signal meanwhile stops the child (SIGTERM, SIGKILL after
/// two seconds) and reaps it before the tool dies. Fails only when the
/// program cannot be started.
Expected<ChildExit> runChild(const std::vector<std::string> &Args, const std::vector<std::string> &Env = {});

} // namespace onnxp

#endif // ONNXP_SUPPORT_CHILDPROCESS_H
