//===- Support/OutputTransaction.h - All-or-nothing output files -*- C++ -*-===//
//
// A run that writes several files (-o, --report, the stage folder) writes
// each to a temporary beside its target and renames all of them only when
// every one was written (issue 16, item 3). Until then a failure, or
// SIGINT, SIGTERM, SIGHUP or SIGQUIT, removes the temporaries; nothing
// half-written and no `*.tmp-*` file is left behind, and an earlier run's
// files stay intact.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_OUTPUTTRANSACTION_H
#define ONNXP_SUPPORT_OUTPUTTRANSACTION_H

#include "onnx-partition/Support/Error.h"
#include "onnx-partition/Support/FileIO.h"

#include <string>
#include <vector>

namespace onnxp {

class OutputTransaction {
public:
  OutputTransaction();
  ~OutputTransaction(); ///< Removes the temporaries of an uncommitted transaction.
  OutputTransaction(const OutputTransaction &) = delete;
  OutputTransaction &operator=(const OutputTransaction &) = delete;

  /// Writes Contents to a temporary beside Path (nothing at Path changes
  /// yet); a FIFO or character device at Path is written at commit, in
  /// place. Errors when Path is an input of this run or another output of
  /// this transaction (by file identity, FileIO.h). Flag names the option.
  Error add(const std::string &Path, const std::string &Contents, const std::string &Flag = "output");
  /// Registers Path like add() and returns the temporary to write it to,
  /// open, for files written in pieces (external data files of several
  /// GiB); Path must be a regular file or absent. The caller writes through
  /// the descriptor and closes it: the temporary is never reopened by name,
  /// so nothing planted at that name in between can redirect the write.
  Expected<TempFile> reserve(const std::string &Path, const std::string &Flag = "output");
  /// After commit, files in Dir that the run that last wrote Dir listed in
  /// its pipeline.json (stage<N>_<device>.onnx and their .data) and that
  /// this transaction did not write are removed: the folder holds this
  /// run's stages only, and no file the tool did not write is ever removed.
  /// Call it after the stages are added, before commit.
  void replaceStagesIn(const std::string &Dir);
  /// Writes the in-place outputs, then renames every temporary into place,
  /// then removes stale stage files.
  Error commit();

private:
  struct Entry {
    std::string path;     ///< as the user gave it
    std::string target;   ///< what the rename replaces (the path itself)
    std::string tmp;      ///< empty for an in-place output
    std::string contents; ///< in-place outputs only
  };
  Error checkNew(const std::string &Path, const std::string &Flag) const;
  /// Removes the stage files of StageDirs this transaction did not write.
  void removeStaleStages() const;

  std::vector<Entry> Entries;
  struct StageDir {
    std::string dir;
    std::vector<std::string> listed; ///< file names the last pipeline.json there lists
  };
  std::vector<StageDir> StageDirs;
  bool Committed = false;
};

/// The dispositions of the signals OutputTransaction handles, saved when
/// made and put back when destroyed: a process that runs the compiler
/// inside it (Python's module) keeps its own Ctrl-C after the run (issue
/// 39, item 7). The next transaction installs the handlers again.
class SavedSignalHandlers {
public:
  SavedSignalHandlers();
  ~SavedSignalHandlers();
  SavedSignalHandlers(const SavedSignalHandlers &) = delete;
  SavedSignalHandlers &operator=(const SavedSignalHandlers &) = delete;

private:
  struct Saved;
  Saved *S;
};

/// Whether two paths name the same file (existing or not): the same device
/// and inode when both exist, else compared after resolving '.', '..' and
/// symlinks of the existing part.
bool samePath(const std::string &A, const std::string &B);

} // namespace onnxp

#endif // ONNXP_SUPPORT_OUTPUTTRANSACTION_H
