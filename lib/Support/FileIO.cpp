//===- Support/FileIO.cpp - Reading inputs, writing outputs safely ------===//
#include "onnx-partition/Support/FileIO.h"

#include "onnx-partition/Support/HumanUnits.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
struct InputId {
  dev_t dev;
  ino_t ino;
  std::string path;
};
std::mutex InputsMutex;
std::vector<InputId> &inputs() {
  static std::vector<InputId> V;
  return V;
}

std::string capText(uint64_t Cap) {
  return std::to_string(Cap) + " bytes (" + humanBytes(static_cast<double>(Cap)) + ")";
}
} // namespace

void onnxp::noteInputFile(const std::string &Path) {
  struct stat St;
  if (stat(Path.c_str(), &St) != 0 || !S_ISREG(St.st_mode)) return; // only files can be replaced
  std::lock_guard<std::mutex> Lock(InputsMutex);
  for (const InputId &I : inputs())
    if (I.dev == St.st_dev && I.ino == St.st_ino) return;
  inputs().push_back({St.st_dev, St.st_ino, Path});
}

std::string onnxp::inputFileMatching(const std::string &Path) {
  struct stat St;
  if (stat(Path.c_str(), &St) != 0) return "";
  std::lock_guard<std::mutex> Lock(InputsMutex);
  for (const InputId &I : inputs())
    if (I.dev == St.st_dev && I.ino == St.st_ino) return I.path;
  return "";
}

Expected<std::string> onnxp::readFile(const std::string &Path, uint64_t Cap, const std::string &Kind,
                                      bool RememberAsInput) {
  int Fd = open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (Fd < 0) {
    if (errno == ENOENT) return makeError("cannot open '", Path, "': no such file");
    return makeError("cannot open '", Path, "': ", std::strerror(errno));
  }
  struct Closer {
    int Fd;
    ~Closer() { close(Fd); }
  } C{Fd};
  struct stat St;
  if (fstat(Fd, &St) != 0) return makeError("cannot read '", Path, "': ", std::strerror(errno));
  if (S_ISDIR(St.st_mode)) return makeError("cannot read '", Path, "': it is a directory");
  auto TooBig = [&] {
    return makeError("'", Path, "' is larger than ", capText(Cap), ", the limit for ", Kind);
  };
  if (S_ISREG(St.st_mode)) {
    if (static_cast<uint64_t>(St.st_size) > Cap) return TooBig();
    if (RememberAsInput) noteInputFile(Path);
  }
  // Read in chunks, never more than Cap + 1 bytes: a device or FIFO that
  // never ends (/dev/zero) is refused once it passes the cap.
  std::string Out;
  if (S_ISREG(St.st_mode)) Out.reserve(static_cast<size_t>(St.st_size));
  std::vector<char> Buf(1 << 20);
  while (true) {
    ssize_t N = read(Fd, Buf.data(), Buf.size());
    if (N < 0) {
      if (errno == EINTR) continue;
      return makeError("cannot read '", Path, "': ", std::strerror(errno));
    }
    if (N == 0) break;
    if (Out.size() + static_cast<uint64_t>(N) > Cap) return TooBig();
    Out.append(Buf.data(), static_cast<size_t>(N));
  }
  return Out;
}

Error onnxp::checkWritable(const std::string &Path, const std::string &Flag) {
  fs::path P(Path);
  fs::path Dir = P.parent_path().empty() ? fs::path(".") : P.parent_path();
  std::error_code EC;
  if (!fs::is_directory(Dir, EC))
    return makeError(Flag, " '", Path, "': directory '", Dir.string(), "' does not exist");
  if (fs::is_directory(P, EC)) return makeError(Flag, " '", Path, "' is a directory");
  Expected<OutputKind> K = classifyOutput(Path, Flag);
  if (!K) return K.takeError();
  if (*K == OutputKind::Replace && access(Dir.c_str(), W_OK) != 0)
    return makeError(Flag, " '", Path, "': directory '", Dir.string(), "' is not writable");
  return Error::success();
}

Expected<OutputKind> onnxp::classifyOutput(const std::string &Path, const std::string &Flag) {
  std::string In = inputFileMatching(Path);
  if (!In.empty())
    return makeUsageError(Flag, " '", Path, "' is the same file as the input '", In,
                          "'; each output needs its own file");
  struct stat St;
  if (stat(Path.c_str(), &St) != 0) return OutputKind::Replace; // absent (or a dangling link)
  if (S_ISFIFO(St.st_mode) || S_ISCHR(St.st_mode)) return OutputKind::InPlace;
  if (S_ISDIR(St.st_mode)) return makeError(Flag, " '", Path, "' is a directory");
  if (!S_ISREG(St.st_mode))
    return makeError(Flag, " '", Path,
                     "' is neither a regular file, a FIFO nor a character device; onnx-partition does not "
                     "write to it");
  // /dev/stdout, /proc/self/fd/N: links to whatever the shell opened; a
  // rename would replace the link (or the shell's file) -- write through it.
  std::error_code EC;
  std::string Abs = fs::absolute(Path, EC).lexically_normal().string();
  if (Abs.rfind("/dev/", 0) == 0 || Abs.rfind("/proc/", 0) == 0) return OutputKind::InPlace;
  return OutputKind::Replace;
}

Expected<TempFile> onnxp::createTempBeside(const std::string &Target) {
  static std::mt19937_64 Rng(std::random_device{}() ^ (static_cast<uint64_t>(getpid()) << 32));
  static const char Alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int Try = 0; Try < 100; ++Try) {
    std::string Name = Target + ".tmp-";
    for (int I = 0; I < 12; ++I) Name += Alphabet[Rng() % (sizeof Alphabet - 1)];
    // O_EXCL: never an existing file, never through a symlink planted at
    // the name; 0666 is reduced by the umask like any file the user makes.
    int Fd = open(Name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (Fd >= 0) return TempFile{Name, Fd};
    if (errno != EEXIST) return makeError("cannot write '", Name, "': ", std::strerror(errno));
  }
  return makeError("cannot create a temporary beside '", Target, "'");
}

bool onnxp::writeAll(int Fd, const char *Data, size_t Size) {
  while (Size > 0) {
    ssize_t N = write(Fd, Data, Size);
    if (N < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    Data += N;
    Size -= static_cast<size_t>(N);
  }
  return true;
}

Error onnxp::writeInPlace(const std::string &Path, const std::string &Contents) {
  // No O_CREAT: the file exists; O_APPEND so /dev/stdout redirected to a
  // file adds to it rather than overwriting what the run printed.
  int Fd = open(Path.c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
  if (Fd < 0) return makeError("cannot write '", Path, "': ", std::strerror(errno));
  bool Ok = writeAll(Fd, Contents.data(), Contents.size());
  int Errno = errno;
  if (close(Fd) != 0 && Ok) {
    Ok = false;
    Errno = errno;
  }
  if (!Ok) return makeError("cannot write '", Path, "': ", std::strerror(Errno));
  return Error::success();
}
