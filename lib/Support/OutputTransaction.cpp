//===- Support/OutputTransaction.cpp - All-or-nothing output files -------===//
//
// Temporaries are registered with SignalCleanup.h's table, which the signal
// handler walks; a temporary is created and registered under one block of
// the signals, so no signal falls between the two.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Support/OutputTransaction.h"

#include "SignalCleanup.h"

#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <regex>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
using signal_cleanup::Block;

/// A registered temporary beside Target (created and registered under one
/// block of the signals).
Expected<TempFile> registeredTemp(const std::string &Target) {
  Block B;
  Expected<TempFile> T = createTempBeside(Target);
  if (!T) return T;
  if (!signal_cleanup::registerPath(T->path)) {
    close(T->fd);
    unlink(T->path.c_str());
    return makeError("too many output files (or a path too long): '", Target, "'");
  }
  return T;
}

std::string dirOf(const std::string &Path) {
  std::string D = fs::path(Path).parent_path().string();
  return D.empty() ? "." : D;
}

/// Exclusive flock(2)s on the folders a commit renames into, taken in one
/// order (device, inode) so two runs never wait for each other in a cycle,
/// released when destroyed. A folder that cannot be opened or locked (a
/// file system without locks) is left unlocked: the commit goes on as it
/// did before the lock existed.
class FolderLocks {
public:
  template <typename EntryList> explicit FolderLocks(const EntryList &Entries) {
    std::vector<std::pair<std::pair<dev_t, ino_t>, int>> Open;
    std::set<std::pair<dev_t, ino_t>> Seen;
    for (const auto &E : Entries) {
      if (E.tmp.empty()) continue;
      int Fd = ::open(dirOf(E.target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      struct stat St;
      if (Fd < 0) continue;
      if (fstat(Fd, &St) != 0 || !Seen.insert({St.st_dev, St.st_ino}).second) {
        close(Fd);
        continue;
      }
      Open.push_back({{St.st_dev, St.st_ino}, Fd});
    }
    std::sort(Open.begin(), Open.end());
    for (auto &[Id, Fd] : Open) {
      while (flock(Fd, LOCK_EX) != 0 && errno == EINTR) {}
      Fds.push_back(Fd);
    }
  }
  ~FolderLocks() {
    for (int Fd : Fds) close(Fd); // closing releases the lock
  }
  FolderLocks(const FolderLocks &) = delete;
  FolderLocks &operator=(const FolderLocks &) = delete;

private:
  std::vector<int> Fds;
};
} // namespace

OutputTransaction::OutputTransaction() { signal_cleanup::installHandlers(); }

OutputTransaction::~OutputTransaction() {
  if (Committed) return;
  for (const Entry &E : Entries) {
    if (E.tmp.empty()) continue;
    std::error_code EC;
    fs::remove(E.tmp, EC);
    signal_cleanup::forgetPath(E.tmp);
  }
}

Error OutputTransaction::checkNew(const std::string &Path, const std::string &Flag) const {
  // Character devices (/dev/null) may take several outputs.
  struct stat St;
  if (stat(Path.c_str(), &St) == 0 && S_ISCHR(St.st_mode)) return Error::success();
  for (const Entry &E : Entries)
    if (samePath(E.path, Path) || samePath(E.target, Path))
      return makeUsageError(Flag, " '", Path, "': two outputs of this run are the same file '", E.path, "'");
  return Error::success();
}

Expected<TempFile> OutputTransaction::reserve(const std::string &Path, const std::string &Flag) {
  ONNXP_RETURN_IF_ERROR(checkNew(Path, Flag));
  Expected<OutputKind> K = classifyOutput(Path, Flag);
  if (!K) return K.takeError();
  if (*K != OutputKind::Replace)
    return makeError(Flag, " '", Path, "' is not a regular file; files written in pieces need one");
  Expected<TempFile> T = registeredTemp(Path);
  if (!T) return T.takeError();
  Entries.push_back({Path, Path, T->path, ""});
  return *T; // the caller writes through T->fd and closes it
}

Error OutputTransaction::add(const std::string &Path, const std::string &Contents, const std::string &Flag) {
  ONNXP_RETURN_IF_ERROR(checkNew(Path, Flag));
  Expected<OutputKind> K = classifyOutput(Path, Flag);
  if (!K) return K.takeError();
  if (*K == OutputKind::InPlace) {
    Entries.push_back({Path, Path, "", Contents});
    return Error::success();
  }
  Expected<TempFile> T = registeredTemp(Path);
  if (!T) return T.takeError();
  Entries.push_back({Path, Path, T->path, ""});
  bool Ok = writeAll(T->fd, Contents.data(), Contents.size());
  int Errno = errno;
  if (close(T->fd) != 0 && Ok) {
    Ok = false;
    Errno = errno;
  }
  if (!Ok) return makeError("cannot write '", Path, "': ", std::strerror(Errno));
  return Error::success();
}

void OutputTransaction::replaceStagesIn(const std::string &Dir) {
  // What the last run wrote here, read now: pipeline.json is about to be replaced.
  StageDir S{Dir, {}};
  Expected<std::string> Text = readFile((fs::path(Dir) / "pipeline.json").string(), kMaxJsonInputBytes,
                                        "a pipeline.json", /*RememberAsInput=*/false);
  if (Text) {
    nlohmann::json J = nlohmann::json::parse(*Text, nullptr, /*allow_exceptions=*/false);
    if (J.is_object() && J.contains("stages") && J["stages"].is_array())
      for (const nlohmann::json &St : J["stages"])
        if (St.is_object() && St.contains("file") && St["file"].is_string()) {
          std::string F = St["file"].get<std::string>();
          S.listed.push_back(F);
          S.listed.push_back(F + ".data");
        }
    // Issue 35: the action lists' CSV of a run with a named schedule.
    if (J.is_object() && J.contains("schedule_actions") && J["schedule_actions"].is_object() &&
        J["schedule_actions"].value("csv", "") == "pipeline_actions.csv")
      S.listed.push_back("pipeline_actions.csv");
  }
  StageDirs.push_back(std::move(S));
}

Error OutputTransaction::commit() {
  // Test hook: every temporary is written; a test sends a signal during
  // this pause and checks nothing is left (test/lit/Tool/signal-*).
  if (const char *Ms = std::getenv("ONNXP_TEST_COMMIT_DELAY_MS"))
    usleep(static_cast<useconds_t>(std::strtoul(Ms, nullptr, 10) % 60000) * 1000);
  // In-place outputs (a FIFO may block until its reader comes) are written
  // first, with signals deliverable: an interrupted run removes the
  // temporaries and has renamed nothing.
  for (const Entry &E : Entries)
    if (E.tmp.empty()) ONNXP_RETURN_IF_ERROR(writeInPlace(E.path, E.contents));
  // Renames within one folder are atomic; the set of renames (and the
  // removal of stale stage files) is made so for signals too: they wait
  // until every output is in place (then the process dies with all of them
  // written), never half a set. A failure midway (disk gone) leaves earlier
  // files renamed, which is reported.
  // Another run committing into the same folders waits until this run's
  // renames are all done (issue 39, item 9): what is left is one run's set.
  FolderLocks Locks(Entries);
  Block B;
  const char *RenameDelay = std::getenv("ONNXP_TEST_RENAME_DELAY_MS"); // test hook: widen the window
  for (const Entry &E : Entries) {
    if (E.tmp.empty()) continue;
    // An input swapped in at the target since add() is still never replaced.
    std::string In = inputFileMatching(E.target);
    if (!In.empty())
      return makeUsageError("output '", E.path, "' is the same file as the input '", In,
                            "'; each output needs its own file");
    std::error_code EC;
    fs::rename(E.tmp, E.target, EC);
    if (EC) return makeError("cannot move output into place at '", E.path, "': ", EC.message());
    signal_cleanup::forgetPath(E.tmp);
    if (RenameDelay) usleep(static_cast<useconds_t>(std::strtoul(RenameDelay, nullptr, 10) % 60000) * 1000);
  }
  Committed = true;
  removeStaleStages();
  return Error::success();
}

void OutputTransaction::removeStaleStages() const {
  static const std::regex StageFile(R"(stage[0-9]+_[A-Za-z0-9]+\.onnx(\.data)?)");
  for (const StageDir &S : StageDirs) {
    std::set<std::string> Written;
    for (const Entry &E : Entries)
      if (samePath(dirOf(E.path), S.dir)) Written.insert(fs::path(E.path).filename());
    for (const std::string &Name : S.listed) {
      // Only a plain name the last run listed, shaped like a stage file,
      // a regular file (not a link), not written now and not an input.
      if (Name.find('/') != std::string::npos ||
          !(std::regex_match(Name, StageFile) || Name == "pipeline_actions.csv") || Written.count(Name))
        continue;
      std::string Path = (fs::path(S.dir) / Name).string();
      struct stat St;
      if (lstat(Path.c_str(), &St) != 0 || !S_ISREG(St.st_mode) || !inputFileMatching(Path).empty()) continue;
      unlink(Path.c_str());
    }
  }
}

Error onnxp::writeFileAtomically(const std::string &Path, const std::string &Contents) {
  ONNXP_RETURN_IF_ERROR(checkWritable(Path, "output"));
  OutputTransaction Tx;
  ONNXP_RETURN_IF_ERROR(Tx.add(Path, Contents));
  return Tx.commit();
}

bool onnxp::samePath(const std::string &A, const std::string &B) {
  // The same file by identity (hard links, bind mounts, any spelling).
  struct stat SA, SB;
  if (stat(A.empty() ? "." : A.c_str(), &SA) == 0 && stat(B.empty() ? "." : B.c_str(), &SB) == 0)
    return SA.st_dev == SB.st_dev && SA.st_ino == SB.st_ino;
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
