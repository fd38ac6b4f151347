//===- Support/FileIO.cpp - Reading inputs, writing outputs safely ------===//
#include "onnx-partition/Support/FileIO.h"

#include "onnx-partition/Support/HumanUnits.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>
#include <regex>
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
  // Any other regular file, under /dev/shm or wherever, is replaced
  // atomically: written in place it would be appended to (issue 39 item 4).
  if (namesADescriptor(Path)) return OutputKind::InPlace;
  return OutputKind::Replace;
}

bool onnxp::isCharDevice(const std::string &Path) {
  struct stat St;
  return stat(Path.c_str(), &St) == 0 && S_ISCHR(St.st_mode);
}

namespace {
/// Walks Path's link chain by hand, checking each hop before it is followed
/// (/proc/self/fd/1 reads as the redirected file's own path). Returns
/// whether a hop names a descriptor, and in Fd the number when it is one of
/// this process's own (else -1).
bool walkToDescriptor(const std::string &Path, int &Fd) {
  static const std::regex FdPath(R"(/dev/(stdin|stdout|stderr|fd/([0-9]+))|/proc/([^/]+)/fd/([0-9]+))");
  Fd = -1;
  std::string Cur = Path;
  for (int Hop = 0; Hop < 40; ++Hop) {
    std::error_code EC;
    fs::path Abs = fs::absolute(Cur, EC).lexically_normal();
    if (EC) return false;
    std::smatch M;
    std::string A = Abs.string();
    if (std::regex_match(A, M, FdPath)) {
      static const char *Std[] = {"stdin", "stdout", "stderr"};
      for (int I = 0; I < 3; ++I)
        if (M[1] == Std[I]) Fd = I;
      if (M[2].matched) Fd = std::atoi(M[2].str().c_str());
      if (M[3].matched && (M[3] == "self" || M[3] == std::to_string(getpid())))
        Fd = std::atoi(M[4].str().c_str());
      return true;
    }
    struct stat St;
    if (lstat(Abs.c_str(), &St) != 0 || !S_ISLNK(St.st_mode)) return false;
    fs::path Target = fs::read_symlink(Abs, EC);
    if (EC) return false;
    Cur = Target.is_absolute() ? Target.string() : (Abs.parent_path() / Target).string();
  }
  return false;
}
} // namespace

bool onnxp::namesADescriptor(const std::string &Path) {
  int Fd;
  return walkToDescriptor(Path, Fd);
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
  // One of our own descriptors (/dev/stdout): written through it, after what
  // the run printed there so far, so the shared offset keeps both in order;
  // opened anew, the shell's non-append descriptor would later overwrite it.
  int Own = -1;
  if (walkToDescriptor(Path, Own) && Own >= 0 && fcntl(Own, F_GETFD) != -1) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    if (!writeAll(Own, Contents.data(), Contents.size()))
      return makeError("cannot write '", Path, "': ", std::strerror(errno));
    return Error::success();
  }
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
