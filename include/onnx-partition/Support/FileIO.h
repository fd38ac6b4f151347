//===- Support/FileIO.h - Reading inputs, writing outputs safely -*- C++ -*-===//
//
// Outputs are written to a temporary file beside the target and renamed into
// place only when complete, so a failure never leaves a half-written file.
// Issue 25 hardened both directions:
//  - every input is read with a size cap (a message names the cap) and its
//    file identity (device, inode) is remembered, so no output of the run
//    can replace or delete it, whatever name (link, "..") the output uses;
//  - temporaries are created with O_CREAT|O_EXCL under unpredictable names
//    (mkstemp) with the umask's mode, so a symlink planted at a temporary's
//    name is never followed;
//  - an output path that is a FIFO, a character device or a descriptor's
//    name (/dev/stdout, /proc/self/fd/N) is written in place, never replaced
//    by a rename; other regular files (also under /dev/shm) are replaced
//    (issue 39); other non-regular files are refused.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_FILEIO_H
#define ONNXP_SUPPORT_FILEIO_H

#include "onnx-partition/Support/Error.h"

#include <cstdint>
#include <string>

namespace onnxp {

/// Input size caps (issue 25, item 5). MODEL: protobuf cannot parse an ONNX
/// model above 2 GiB (larger models keep weights in external data), and the
/// chain and workload formats MODEL may also be are far smaller.
constexpr uint64_t kMaxModelFileBytes = (uint64_t(1) << 31) - 1;
/// JSON side inputs: --platform, --cost-table, --load-plan.
constexpr uint64_t kMaxJsonInputBytes = uint64_t(64) << 20;
/// ONNX Runtime profiles (--profile): one event per node and run.
constexpr uint64_t kMaxProfileBytes = uint64_t(1) << 30;

/// Whole file contents, or an error naming the path and the reason. A file
/// larger than Cap bytes is an error naming Kind ("an ONNX model") and the
/// cap, found without reading past it (/dev/zero ends at once). The file's
/// identity is remembered as an input of this run (inputFileMatching)
/// unless RememberAsInput is false (a file the run itself replaces).
Expected<std::string> readFile(const std::string &Path, uint64_t Cap = kMaxModelFileBytes,
                               const std::string &Kind = "an input", bool RememberAsInput = true);

/// Remembers Path (when it exists) as an input of this run: no output may
/// be the same file. readFile does this; callers that read a file another
/// way (external data) call it themselves.
void noteInputFile(const std::string &Path);
/// The input of this run that Path is the same file as (by device and
/// inode, so links and other spellings count), or "" when none.
std::string inputFileMatching(const std::string &Path);

/// Writes Contents to Path via a temporary file and rename (in place for a
/// FIFO or character device). Errors when the directory does not exist or
/// is not writable, or Path is an input of this run; nothing is left behind.
Error writeFileAtomically(const std::string &Path, const std::string &Contents);

/// Checks up front that Path could be written (its directory exists), so a
/// long run does not end in a failure to write.
Error checkWritable(const std::string &Path, const std::string &Flag);

/// How an output path is written.
enum class OutputKind {
  /// A temporary beside it renamed over it: absent, a regular file, or a
  /// symlink to one (the link is replaced, its target is not followed: a
  /// link planted in a shared folder must not redirect the write).
  Replace,
  InPlace, ///< opened and written directly (FIFO, character device, /dev/stdout)
};
/// True when Path (or a symbolic link on its way) names an open descriptor
/// of the process: /dev/stdout, /dev/fd/N, /proc/PID/fd/N. Those are
/// written in place; every other regular file is replaced by a rename.
bool namesADescriptor(const std::string &Path);

/// True when Path exists and is a character device (/dev/null), which may
/// take several outputs of one run.
bool isCharDevice(const std::string &Path);

/// How Path is to be written, or an error for a directory, a block device,
/// a socket, or an input of this run. Flag names the option for messages.
Expected<OutputKind> classifyOutput(const std::string &Path, const std::string &Flag);

/// A new temporary beside Target, created exclusively (O_CREAT|O_EXCL,
/// O_NOFOLLOW) under an unpredictable name "<Target>.tmp-<random>" with mode
/// 0666 minus the umask. Returns its path and its open descriptor.
struct TempFile {
  std::string path;
  int fd = -1;
};
Expected<TempFile> createTempBeside(const std::string &Target);

/// Writes all of Data to Fd (retrying short writes); false on error.
bool writeAll(int Fd, const char *Data, size_t Size);

/// Opens a FIFO or device for an in-place write and writes Contents.
Error writeInPlace(const std::string &Path, const std::string &Contents);

} // namespace onnxp

#endif // ONNXP_SUPPORT_FILEIO_H
