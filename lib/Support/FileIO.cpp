//===- Support/FileIO.cpp - Reading inputs, writing outputs safely ------===//
#include "onnx-partition/Support/FileIO.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

Expected<std::string> onnxp::readFile(const std::string &Path) {
  std::error_code EC;
  if (!fs::exists(Path, EC)) return makeError("cannot open '", Path, "': no such file");
  if (fs::is_directory(Path, EC)) return makeError("cannot read '", Path, "': it is a directory");
  std::ifstream In(Path, std::ios::binary);
  if (!In) return makeError("cannot open '", Path, "': ", std::strerror(errno));
  std::ostringstream SS;
  SS << In.rdbuf();
  if (In.bad()) return makeError("cannot read '", Path, "'");
  return SS.str();
}

Error onnxp::checkWritable(const std::string &Path, const std::string &Flag) {
  fs::path P(Path);
  fs::path Dir = P.parent_path().empty() ? fs::path(".") : P.parent_path();
  std::error_code EC;
  if (!fs::is_directory(Dir, EC))
    return makeError(Flag, " '", Path, "': directory '", Dir.string(), "' does not exist");
  if (fs::is_directory(P, EC)) return makeError(Flag, " '", Path, "' is a directory");
  if (access(Dir.c_str(), W_OK) != 0)
    return makeError(Flag, " '", Path, "': directory '", Dir.string(), "' is not writable");
  return Error::success();
}

Error onnxp::writeFileAtomically(const std::string &Path, const std::string &Contents) {
  ONNXP_RETURN_IF_ERROR(checkWritable(Path, "output"));
  std::string Tmp = Path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream Out(Tmp, std::ios::binary | std::ios::trunc);
    if (!Out) return makeError("cannot write '", Tmp, "': ", std::strerror(errno));
    Out.write(Contents.data(), static_cast<std::streamsize>(Contents.size()));
    Out.flush();
    if (!Out) {
      std::error_code EC;
      fs::remove(Tmp, EC);
      return makeError("cannot write '", Path, "': ", std::strerror(errno));
    }
  }
  std::error_code EC;
  fs::rename(Tmp, Path, EC);
  if (EC) {
    fs::remove(Tmp, EC);
    return makeError("cannot move output into place at '", Path, "': ", EC.message());
  }
  return Error::success();
}
