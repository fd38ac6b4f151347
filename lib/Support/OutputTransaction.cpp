//===- Support/OutputTransaction.cpp - All-or-nothing output files -------===//
//
// Temporaries are registered in a fixed table that the SIGINT/SIGTERM
// handler can walk with async-signal-safe calls only (unlink, then the
// default action re-raised). The table is updated with those signals
// blocked, so the handler never sees it half-changed.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/OutputTransaction.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
constexpr int kMaxTemporaries = 4096;
constexpr int kMaxPath = 4096;
char Temporaries[kMaxTemporaries][kMaxPath];
volatile sig_atomic_t NumTemporaries = 0;

class BlockSignals {
public:
  BlockSignals() {
    sigset_t S;
    sigemptyset(&S);
    sigaddset(&S, SIGINT);
    sigaddset(&S, SIGTERM);
    sigprocmask(SIG_BLOCK, &S, &Old);
  }
  ~BlockSignals() { sigprocmask(SIG_SETMASK, &Old, nullptr); }

private:
  sigset_t Old;
};

extern "C" void removeTemporariesAndDie(int Sig) {
  for (int I = 0; I < NumTemporaries; ++I)
    if (Temporaries[I][0]) unlink(Temporaries[I]);
  signal(Sig, SIG_DFL);
  raise(Sig);
}

void installHandlers() {
  static bool Installed = false;
  if (Installed) return;
  Installed = true;
  for (int Sig : {SIGINT, SIGTERM}) {
    struct sigaction A;
    std::memset(&A, 0, sizeof A);
    A.sa_handler = removeTemporariesAndDie;
    sigemptyset(&A.sa_mask);
    sigaction(Sig, &A, nullptr);
  }
}

bool registerTemporary(const std::string &Path) {
  BlockSignals B;
  if (NumTemporaries >= kMaxTemporaries || Path.size() >= kMaxPath) return false;
  std::memcpy(Temporaries[NumTemporaries], Path.c_str(), Path.size() + 1);
  NumTemporaries = NumTemporaries + 1;
  return true;
}

void forgetTemporary(const std::string &Path) {
  BlockSignals B;
  for (int I = 0; I < NumTemporaries; ++I)
    if (Path == Temporaries[I]) Temporaries[I][0] = '\0';
}
} // namespace

OutputTransaction::OutputTransaction() { installHandlers(); }

OutputTransaction::~OutputTransaction() {
  if (Committed) return;
  for (const Entry &E : Entries) {
    std::error_code EC;
    fs::remove(E.tmp, EC);
    forgetTemporary(E.tmp);
  }
}

Expected<std::string> OutputTransaction::reserve(const std::string &Path) {
  for (const Entry &E : Entries)
    if (samePath(E.path, Path))
      return makeUsageError("two outputs of this run are the same file '", Path, "'");
  std::string Tmp = Path + ".tmp-" + std::to_string(getpid());
  if (!registerTemporary(Tmp)) return makeError("too many output files (or a path too long): '", Path, "'");
  Entries.push_back({Path, Tmp});
  return Tmp;
}

Error OutputTransaction::add(const std::string &Path, const std::string &Contents) {
  Expected<std::string> Reserved = reserve(Path);
  if (!Reserved) return Reserved.takeError();
  const std::string &Tmp = *Reserved;
  std::ofstream Out(Tmp, std::ios::binary | std::ios::trunc);
  if (!Out) return makeError("cannot write '", Tmp, "': ", std::strerror(errno));
  Out.write(Contents.data(), static_cast<std::streamsize>(Contents.size()));
  Out.flush();
  if (!Out) return makeError("cannot write '", Path, "': ", std::strerror(errno));
  return Error::success();
}

void OutputTransaction::replaceStagesIn(const std::string &Dir) { StageDirs.push_back(Dir); }

Error OutputTransaction::commit() {
  // Test hook: every temporary is written; a test sends SIGINT/SIGTERM
  // during this pause and checks nothing is left (test/lit/Tool/signal-*).
  if (const char *Ms = std::getenv("ONNXP_TEST_COMMIT_DELAY_MS"))
    usleep(static_cast<useconds_t>(std::strtoul(Ms, nullptr, 10) % 60000) * 1000);
  // Renames within one folder are atomic; the set of renames (and the
  // removal of stale stage files) is made so for signals too: SIGINT and
  // SIGTERM wait until every output is in place (then the process dies with
  // all of them written), never half a set. A failure midway (disk gone)
  // leaves earlier files renamed, which is reported.
  BlockSignals B;
  for (const Entry &E : Entries) {
    std::error_code EC;
    fs::rename(E.tmp, E.path, EC);
    if (EC) return makeError("cannot move output into place at '", E.path, "': ", EC.message());
    forgetTemporary(E.tmp);
  }
  Committed = true;
  removeStaleStages();
  return Error::success();
}

void OutputTransaction::removeStaleStages() const {
  static const std::regex StageFile(R"(stage[0-9]+_[A-Za-z0-9]+\.onnx(\.data)?)");
  for (const std::string &Dir : StageDirs) {
    std::set<std::string> Written;
    for (const Entry &E : Entries)
      if (samePath(fs::path(E.path).parent_path().string(), Dir)) Written.insert(fs::path(E.path).filename());
    std::error_code EC;
    for (const auto &F : fs::directory_iterator(Dir, EC)) {
      std::string Name = F.path().filename();
      if (F.is_regular_file() && std::regex_match(Name, StageFile) && !Written.count(Name)) {
        std::error_code RC;
        fs::remove(F.path(), RC);
      }
    }
  }
}

bool onnxp::samePath(const std::string &A, const std::string &B) {
  // Never throws: "" is the current folder, unresolvable parts compare lexically.
  auto Resolve = [](const std::string &P) {
    std::error_code EC;
    fs::path Abs = fs::absolute(P.empty() ? fs::path(".") : fs::path(P), EC);
    if (EC) return fs::path(P).lexically_normal();
    fs::path Canon = fs::weakly_canonical(Abs, EC);
    return EC ? Abs.lexically_normal() : Canon;
  };
  return Resolve(A) == Resolve(B);
}
