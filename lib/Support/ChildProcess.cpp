//===- Support/ChildProcess.cpp - Programs the tool runs -----------------===//
//
// See the header. The child is started with every signal unblocked and the
// handled ones at their default action, whatever the tool's own mask, and
// registered with SignalCleanup.h under one block of the signals, so no
// signal falls between the start and the registration.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/ChildProcess.h"

#include "SignalCleanup.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace onnxp;
namespace fs = std::filesystem;

Expected<ScratchDirectory> ScratchDirectory::createBeside(const std::string &Target) {
  fs::path T(Target);
  std::string Dir = T.parent_path().empty() ? "." : T.parent_path().string();
  // Built by appends: g++ 12 reports a false -Wstringop-overflow for
  // "." + std::string at -O3.
  std::string Name = ".";
  Name.append(T.filename().string()).append(".tmp-XXXXXX");
  std::string Template = (fs::path(Dir) / Name).string();
  signal_cleanup::installHandlers();
  signal_cleanup::Block B;
  if (!mkdtemp(Template.data()))
    return makeError("cannot create a scratch folder beside '", Target, "': ", std::strerror(errno));
  if (!signal_cleanup::registerPath(Template, /*Directory=*/true)) {
    rmdir(Template.c_str());
    return makeError("cannot create a scratch folder beside '", Target, "': path too long");
  }
  return ScratchDirectory(Template);
}

ScratchDirectory::ScratchDirectory(ScratchDirectory &&Other) noexcept : Path(std::move(Other.Path)) {
  Other.Path.clear();
}

ScratchDirectory::~ScratchDirectory() {
  if (Path.empty()) return;
  std::error_code EC;
  fs::remove_all(Path, EC);
  signal_cleanup::forgetPath(Path);
}

namespace {
/// environ with Env's entries replacing those of the same name.
std::vector<std::string> mergedEnvironment(const std::vector<std::string> &Env) {
  std::vector<std::string> Out;
  auto NameOf = [](const std::string &E) { return E.substr(0, E.find('=')); };
  for (char **P = environ; P && *P; ++P) {
    std::string E = *P;
    bool Replaced = false;
    for (const std::string &N : Env) Replaced = Replaced || NameOf(N) == NameOf(E);
    if (!Replaced) Out.push_back(std::move(E));
  }
  Out.insert(Out.end(), Env.begin(), Env.end());
  return Out;
}

std::vector<char *> pointers(std::vector<std::string> &Strings) {
  std::vector<char *> P;
  for (std::string &S : Strings) P.push_back(S.data());
  P.push_back(nullptr);
  return P;
}
} // namespace

Expected<ChildExit> onnxp::runChild(const std::vector<std::string> &Args,
                                    const std::vector<std::string> &Env) {
  std::vector<std::string> ArgStrings = Args, EnvStrings = mergedEnvironment(Env);
  std::vector<char *> Argv = pointers(ArgStrings), Envp = pointers(EnvStrings);
  posix_spawnattr_t Attr;
  posix_spawnattr_init(&Attr);
  sigset_t None, Defaults;
  sigemptyset(&None);
  sigemptyset(&Defaults);
  for (int Sig : signal_cleanup::kSignals) sigaddset(&Defaults, Sig);
  posix_spawnattr_setsigmask(&Attr, &None);
  posix_spawnattr_setsigdefault(&Attr, &Defaults);
  posix_spawnattr_setflags(&Attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  signal_cleanup::installHandlers();
  pid_t Pid = 0;
  int Spawned;
  {
    signal_cleanup::Block B;
    Spawned = posix_spawnp(&Pid, Argv[0], nullptr, &Attr, Argv.data(), Envp.data());
    if (Spawned == 0) signal_cleanup::setChild(Pid);
  }
  posix_spawnattr_destroy(&Attr);
  if (Spawned != 0) return makeError("cannot run '", Args[0], "': ", std::strerror(Spawned));
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {}
  {
    signal_cleanup::Block B;
    signal_cleanup::setChild(0);
  }
  ChildExit E;
  E.exited = WIFEXITED(Status);
  E.code = E.exited ? WEXITSTATUS(Status) : 0;
  E.signal = WIFSIGNALED(Status) ? WTERMSIG(Status) : 0;
  return E;
}
