//===- Support/OutputTransaction.h - All-or-nothing output files -*- C++ -*-===//
//
// A run that writes several files (-o, --report, the stage folder) writes
// each to a temporary beside its target and renames all of them only when
// every one was written (issue 16, item 3). Until then a failure, or
// SIGINT/SIGTERM, removes the temporaries; nothing half-written and no
// `*.tmp-PID` file is left behind, and an earlier run's files stay intact.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_OUTPUTTRANSACTION_H
#define ONNXP_SUPPORT_OUTPUTTRANSACTION_H

#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

class OutputTransaction {
public:
  OutputTransaction();
  ~OutputTransaction(); ///< Removes the temporaries of an uncommitted transaction.
  OutputTransaction(const OutputTransaction &) = delete;
  OutputTransaction &operator=(const OutputTransaction &) = delete;

  /// Writes Contents to a temporary beside Path (nothing at Path changes yet).
  Error add(const std::string &Path, const std::string &Contents);
  /// Registers Path like add() and returns the temporary to write it to,
  /// for files written in pieces (external data files of several GiB).
  Expected<std::string> reserve(const std::string &Path);
  /// After commit, files in Dir whose names match stage<N>_<device>.onnx (or
  /// their external data stage<N>_<device>.onnx.data) and that this
  /// transaction did not write are removed: the folder holds this run's stages only.
  void replaceStagesIn(const std::string &Dir);
  /// Renames every temporary into place, then removes stale stage files.
  Error commit();

private:
  struct Entry {
    std::string path, tmp;
  };
  /// Removes the stage files of StageDirs this transaction did not write.
  void removeStaleStages() const;

  std::vector<Entry> Entries;
  std::vector<std::string> StageDirs;
  bool Committed = false;
};

/// Whether two paths name the same file (existing or not): compared after
/// resolving '.', '..' and symlinks of the existing part.
bool samePath(const std::string &A, const std::string &B);

} // namespace onnxp

#endif // ONNXP_SUPPORT_OUTPUTTRANSACTION_H
