//===- IR/ExternalData.cpp - Tensors stored beside the model -------------===//
//
// The rules are in the header. Paths are compared lexically after
// normalization (what ONNX Runtime 1.30 does when it refuses "External data
// path escapes model directory"), and, for files that exist, once more after
// resolving symbolic links, so a link inside the folder cannot lead out of it.
// Data is copied in 1 MiB pieces: weights of large models never sit in
// memory whole.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/ExternalData.h"

#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
/// Offsets of tensors in the data files we write are multiples of this, so
/// a runtime may map them directly.
constexpr uint64_t kAlignment = 64;

template <typename Tensor, typename Fn> void visitTensorAttrs(Tensor &T, Fn &F) {
  if (T.data_location() == onnx::TensorProto::EXTERNAL) F(T);
}

template <typename Graph, typename Fn> void visitGraph(Graph &G, Fn &F);

template <typename Node, typename Fn> void visitNode(Node &N, Fn &F) {
  for (auto &A : *N.mutable_attribute()) {
    if (A.has_t()) visitTensorAttrs(*A.mutable_t(), F);
    for (auto &T : *A.mutable_tensors()) visitTensorAttrs(T, F);
    if (A.has_sparse_tensor()) {
      visitTensorAttrs(*A.mutable_sparse_tensor()->mutable_values(), F);
      visitTensorAttrs(*A.mutable_sparse_tensor()->mutable_indices(), F);
    }
    if (A.has_g()) visitGraph(*A.mutable_g(), F);
    for (auto &Sub : *A.mutable_graphs()) visitGraph(Sub, F);
  }
}

template <typename Graph, typename Fn> void visitGraph(Graph &G, Fn &F) {
  for (auto &T : *G.mutable_initializer()) visitTensorAttrs(T, F);
  for (auto &S : *G.mutable_sparse_initializer()) {
    visitTensorAttrs(*S.mutable_values(), F);
    visitTensorAttrs(*S.mutable_indices(), F);
  }
  for (auto &N : *G.mutable_node()) visitNode(N, F);
}

std::string join(const fs::path &Dir, const std::string &Location) {
  return (fs::path(Dir) / Location).lexically_normal().string();
}

/// Why Location may not be read from a model in some folder, or "".
std::string escapeReason(const std::string &Location) {
  if (Location.empty()) return "it is empty";
  fs::path L(Location);
  if (L.is_absolute() || L.has_root_name() || L.has_root_directory()) return "it is an absolute path";
  fs::path N = L.lexically_normal();
  if (N.empty() || N == "." || N == "./") return "it names the model's folder itself";
  if (*N.begin() == "..") return "it climbs out of the model's folder with '..'";
  return "";
}

bool isInside(const fs::path &Child, const fs::path &Dir) {
  fs::path Rel = Child.lexically_relative(Dir);
  return !Rel.empty() && *Rel.begin() != "..";
}

uint64_t alignUp(uint64_t X) { return (X + kAlignment - 1) / kAlignment * kAlignment; }

void setRef(onnx::TensorProto &T, const std::string &Location, uint64_t Offset, uint64_t Length) {
  T.clear_external_data();
  T.set_data_location(onnx::TensorProto::EXTERNAL);
  auto Add = [&](const char *K, const std::string &V) {
    auto *E = T.add_external_data();
    E->set_key(K);
    E->set_value(V);
  };
  Add("location", Location);
  Add("offset", std::to_string(Offset));
  Add("length", std::to_string(Length));
}

/// An inline tensor's bytes in the little-endian layout ONNX's raw_data
/// uses, taken out of T; nullopt for kinds we leave inline.
std::optional<std::string> takeInlineBytes(onnx::TensorProto &T) {
  using TP = onnx::TensorProto;
  std::string Bytes;
  auto Copy = [&](const auto &Field) {
    using E = std::decay_t<decltype(Field.Get(0))>;
    Bytes.resize(Field.size() * sizeof(E));
    if (Field.size()) std::memcpy(Bytes.data(), Field.data(), Bytes.size());
  };
  if (T.has_raw_data()) {
    Bytes = std::move(*T.mutable_raw_data());
    T.clear_raw_data();
    return Bytes;
  }
  switch (T.data_type()) {
  case TP::FLOAT:
    Copy(T.float_data());
    T.clear_float_data();
    return Bytes;
  case TP::INT32:
    Copy(T.int32_data());
    T.clear_int32_data();
    return Bytes;
  case TP::INT64:
    Copy(T.int64_data());
    T.clear_int64_data();
    return Bytes;
  case TP::DOUBLE:
    Copy(T.double_data());
    T.clear_double_data();
    return Bytes;
  default: return std::nullopt;
  }
}

uint64_t inlineBytes(const onnx::TensorProto &T) {
  if (T.has_raw_data()) return T.raw_data().size();
  return T.float_data_size() * 4ull + T.int32_data_size() * 4ull + T.int64_data_size() * 8ull +
         T.double_data_size() * 8ull;
}
} // namespace

ExternalRef onnxp::externalRef(const onnx::TensorProto &T) {
  ExternalRef R;
  R.tensor = T.name();
  // Only plain decimal digits: std::stoull would take "-1" (as 2^64 - 1),
  // " 12" and "12abc".
  auto Parse = [&](const std::string &Key, const std::string &V) -> std::optional<uint64_t> {
    bool Digits = !V.empty() && V.size() <= 20 && V.find_first_not_of("0123456789") == std::string::npos;
    if (Digits) {
      try {
        return std::stoull(V);
      } catch (...) {}
    }
    if (R.malformed.empty()) R.malformed = Key + " '" + V + "'";
    return std::nullopt;
  };
  for (const auto &KV : T.external_data()) {
    if (KV.key() == "location") R.location = KV.value();
    if (KV.key() == "offset") R.offset = Parse("offset", KV.value()).value_or(0);
    if (KV.key() == "length") R.length = Parse("length", KV.value());
  }
  return R;
}

std::optional<uint64_t> onnxp::declaredTensorBytes(const onnx::TensorProto &T) {
  using TP = onnx::TensorProto;
  uint64_t Elem = 0;
  switch (T.data_type()) {
  case TP::FLOAT:
  case TP::INT32:
  case TP::UINT32: Elem = 4; break;
  case TP::DOUBLE:
  case TP::INT64:
  case TP::UINT64:
  case TP::COMPLEX64: Elem = 8; break;
  case TP::FLOAT16:
  case TP::BFLOAT16:
  case TP::INT16:
  case TP::UINT16: Elem = 2; break;
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL: Elem = 1; break;
  case TP::COMPLEX128: Elem = 16; break;
  default: return std::nullopt;
  }
  uint64_t N = 1;
  for (int64_t D : T.dims()) {
    if (D < 0) return std::nullopt;
    if (D != 0 && N > UINT64_MAX / static_cast<uint64_t>(D)) return std::nullopt;
    N *= static_cast<uint64_t>(D);
  }
  if (N > UINT64_MAX / Elem) return std::nullopt;
  return N * Elem;
}

void onnxp::forEachExternalTensor(onnx::ModelProto &M, const std::function<void(onnx::TensorProto &)> &F) {
  visitGraph(*M.mutable_graph(), F);
  for (auto &Fn : *M.mutable_functions())
    for (auto &N : *Fn.mutable_node()) visitNode(N, F);
}

void onnxp::forEachExternalTensor(const onnx::ModelProto &M,
                                  const std::function<void(const onnx::TensorProto &)> &F) {
  // The traversal never modifies anything; share the mutable walker.
  auto &Mut = const_cast<onnx::ModelProto &>(M);
  forEachExternalTensor(Mut, [&](onnx::TensorProto &T) { F(T); });
}

std::string onnxp::modelFolder(const std::string &ModelPath) {
  fs::path P = fs::path(ModelPath).parent_path();
  return P.empty() ? "." : P.string();
}

Error onnxp::checkExternalLocations(const onnx::ModelProto &M, const std::string &ModelPath) {
  std::string Dir = modelFolder(ModelPath);
  std::error_code EC;
  fs::path RealDir = fs::weakly_canonical(fs::absolute(Dir, EC), EC);
  Error Result = Error::success();
  forEachExternalTensor(M, [&](const onnx::TensorProto &T) {
    if (Result) return;
    ExternalRef R = externalRef(T);
    if (!R.malformed.empty()) {
      Result = makeError(ModelPath, ": external data of tensor '", T.name(), "': ", R.malformed,
                         " is not a non-negative decimal integer");
      return;
    }
    // The bytes a location gives must be the bytes the tensor's dims and
    // type declare: a 64-byte weight pointing at a 64 MiB range would make
    // every written copy 64 MiB (issue 25).
    std::optional<uint64_t> Declared = declaredTensorBytes(T);
    if (R.length && Declared && *R.length != *Declared) {
      Result = makeError(ModelPath, ": external data of tensor '", T.name(), "' has length ", *R.length,
                         " but the tensor's dims and type declare ", *Declared, " bytes");
      return;
    }
    std::string Why = escapeReason(R.location);
    if (Why.empty()) {
      // Inside lexically; a symbolic link may still lead out of the folder.
      fs::path File = fs::path(Dir) / R.location;
      std::error_code E2;
      if (fs::exists(File, E2)) {
        fs::path Real = fs::weakly_canonical(fs::absolute(File, E2), E2);
        if (!E2 && !isInside(Real, RealDir))
          Why = "it resolves (through a symbolic link) to '" + Real.string() + "'";
        else if (!E2 && !fs::is_regular_file(Real, E2)) Why = "it is not a regular file";
        // Known as an input from the moment the model is read: no output of
        // this run (-o, --report, --trace, a stage, stale-stage cleanup) may
        // replace or delete the model's data (issue 39 item 4).
        if (Why.empty()) noteInputFile(File.string());
      }
    }
    if (!Why.empty())
      Result =
          makeError(ModelPath, ": external data of tensor '", T.name(), "' at location '", R.location,
                    "' is refused: ", Why, "; locations must be relative paths inside the model's folder");
  });
  return Result;
}

ExternalSourceFile::~ExternalSourceFile() {
  if (fd >= 0) close(fd);
}

namespace {
/// Opens Path for reading; O_NONBLOCK so that a FIFO put there cannot hang
/// the open (fstat then refuses it). A process out of descriptors (a model
/// with one data file per tensor) raises its soft limit once and retries.
int openForReading(const std::string &Path) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (Fd >= 0 || errno != EMFILE) return Fd;
  struct rlimit L;
  if (getrlimit(RLIMIT_NOFILE, &L) != 0 || L.rlim_cur >= L.rlim_max) return Fd;
  L.rlim_cur = L.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &L) != 0) return Fd;
  return ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

/// The file an open descriptor refers to, as the kernel resolved it.
std::optional<fs::path> descriptorTarget(int Fd) {
  std::error_code EC;
  fs::path P = fs::read_symlink("/proc/self/fd/" + std::to_string(Fd), EC);
  if (EC) return std::nullopt;
  return P;
}
} // namespace

Expected<ExternalSources> onnxp::openExternalSources(const onnx::ModelProto &M, const std::string &ModelDir) {
  ExternalSources Out;
  std::set<std::string> Seen;
  std::error_code EC;
  const fs::path RealDir = fs::weakly_canonical(fs::absolute(ModelDir, EC), EC);
  Error Result = Error::success();
  forEachExternalTensor(M, [&](const onnx::TensorProto &T) {
    ExternalRef R = externalRef(T);
    if (Result || R.location.empty()) return;
    std::string Norm = fs::path(R.location).lexically_normal().string();
    if (!Seen.insert(Norm).second) return;
    auto F = std::make_shared<ExternalSourceFile>();
    F->path = join(ModelDir, R.location);
    F->fd = openForReading(F->path);
    if (F->fd < 0) {
      // Absent data is planned with sizes from the dims (a warning says so);
      // a file that is there but cannot be read is an error.
      if (errno != ENOENT && errno != ENOTDIR)
        Result = makeError(F->path, ": cannot open the external data of tensor '", T.name(),
                           "': ", std::strerror(errno));
      return;
    }
    struct stat St;
    if (fstat(F->fd, &St) != 0 || !S_ISREG(St.st_mode)) return; // not data: absent
    // Confined on the descriptor itself: what was opened is what is read,
    // whatever the name points at later.
    std::optional<fs::path> Real = descriptorTarget(F->fd);
    if (Real && !EC && !isInside(*Real, RealDir)) {
      Result = makeError(F->path, ": external data location '", R.location, "' resolves to '", Real->string(),
                         "', outside the model's folder; locations must stay inside it");
      return;
    }
    F->size = static_cast<uint64_t>(St.st_size);
    Out.emplace(Norm, std::move(F));
  });
  if (Result) return Result;
  return Out;
}

std::vector<ExternalRef> onnxp::absentExternalData(const onnx::ModelProto &M, const std::string &ModelDir) {
  std::vector<ExternalRef> Out;
  forEachExternalTensor(M, [&](const onnx::TensorProto &T) {
    ExternalRef R = externalRef(T);
    std::error_code EC;
    if (R.location.empty() || !fs::is_regular_file(fs::path(ModelDir) / R.location, EC)) Out.push_back(R);
  });
  return Out;
}

onnx::ModelProto onnxp::withoutExternalData(const onnx::ModelProto &M) {
  onnx::ModelProto Copy = M;
  onnx::GraphProto *G = Copy.mutable_graph();
  std::set<std::string> Inputs;
  for (const auto &I : G->input()) Inputs.insert(I.name());
  auto AddInput = [&](const std::string &Name, const onnx::TensorProto &T) {
    if (!Inputs.insert(Name).second) return;
    auto *VI = G->add_input();
    VI->set_name(Name);
    auto *TT = VI->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(T.data_type());
    auto *S = TT->mutable_shape();
    for (int64_t D : T.dims()) S->add_dim()->set_dim_value(D);
  };
  google::protobuf::RepeatedPtrField<onnx::TensorProto> Kept;
  for (auto &T : *G->mutable_initializer()) {
    if (T.data_location() != onnx::TensorProto::EXTERNAL) *Kept.Add() = std::move(T);
    else AddInput(T.name(), T);
  }
  G->mutable_initializer()->Swap(&Kept);
  // A Constant whose value is external (torch exports of large models)
  // becomes an input named after its output.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> Nodes;
  for (auto &N : *G->mutable_node()) {
    bool External = N.op_type() == "Constant" && N.domain().empty() && N.output_size() == 1 &&
                    N.attribute_size() == 1 && N.attribute(0).has_t() &&
                    N.attribute(0).t().data_location() == onnx::TensorProto::EXTERNAL;
    if (External) AddInput(N.output(0), N.attribute(0).t());
    else *Nodes.Add() = std::move(N);
  }
  G->mutable_node()->Swap(&Nodes);
  return Copy;
}

Expected<ExternalDataLayout> onnxp::layoutExternalData(onnx::ModelProto &M, const ExternalWriteOptions &O) {
  ExternalDataLayout L;
  std::string OutDir = modelFolder(O.outputPath);
  std::error_code EC;
  bool SameFolder = fs::equivalent(fs::absolute(O.sourceDir, EC), fs::absolute(OutDir, EC), EC) && !EC;
  std::string OutName = fs::path(O.outputPath).filename().string();

  // The source's files as opened when the model was read, else now.
  ExternalSources Own;
  const ExternalSources *Sources = O.sources;
  if (!SameFolder && !Sources) {
    Expected<ExternalSources> Opened = openExternalSources(M, O.sourceDir);
    if (!Opened) return Opened.takeError();
    Own = std::move(*Opened);
    Sources = &Own;
  }
  auto SourceOf = [&](const ExternalRef &R) -> std::shared_ptr<const ExternalSourceFile> {
    auto It = Sources->find(fs::path(R.location).lexically_normal().string());
    return It == Sources->end() ? nullptr : It->second;
  };

  // Absent data keeps its relative name; the new data file must not take it.
  std::map<std::string, std::pair<int, uint64_t>> Absent; // location -> tensors, bytes
  std::string DataName = OutName + ".data";
  if (!SameFolder)
    forEachExternalTensor(M, [&](const onnx::TensorProto &T) {
      ExternalRef R = externalRef(T);
      if (!SourceOf(R)) Absent[fs::path(R.location).lexically_normal().string()];
    });
  for (int K = 1; Absent.count(DataName); ++K) DataName = OutName + "." + std::to_string(K) + ".data";

  ExternalDataFile F;
  F.path = (fs::path(OutDir) / DataName).string();
  Error Failure = Error::success();
  if (!SameFolder)
    forEachExternalTensor(M, [&](onnx::TensorProto &T) {
      if (Failure) return;
      ExternalRef R = externalRef(T);
      std::string Norm = fs::path(R.location).lexically_normal().string();
      std::string Src = join(O.sourceDir, R.location);
      uint64_t Declared = declaredTensorBytes(T).value_or(0);
      std::shared_ptr<const ExternalSourceFile> Source = SourceOf(R);
      if (!Source) {
        // Same relative name beside the new file: copying the source's file
        // there makes the output complete.
        setRef(T, Norm, R.offset, R.length.value_or(Declared));
        if (!R.length) {
          // Without a length ONNX reads to the end of the file: keep that.
          T.mutable_external_data()->RemoveLast();
        }
        auto &[Count, Bytes] = Absent[Norm];
        ++Count;
        Bytes += R.length.value_or(Declared);
        L.absentLocations.insert(Norm);
        return;
      }
      uint64_t Size = Source->size;
      uint64_t Length =
          R.length ? *R.length : (Declared ? Declared : (Size > R.offset ? Size - R.offset : 0));
      if (R.offset > Size || Length > Size - R.offset) {
        Failure = makeError(Src, ": external data of tensor '", T.name(), "' (offset ", R.offset, ", length ",
                            Length, ") runs past the end of the file (", Size, " bytes)");
        return;
      }
      noteInputFile(Src); // no output of this run may replace it
      ExternalDataFile::Piece P;
      P.offset = alignUp(F.size);
      P.sourcePath = Src;
      P.source = std::move(Source);
      P.sourceOffset = R.offset;
      P.length = Length;
      F.size = P.offset + Length;
      F.pieces.push_back(std::move(P));
      setRef(T, DataName, F.pieces.back().offset, Length);
    });
  if (Failure) return Failure;

  // The 2 GiB protobuf limit: move the largest inline initializers out.
  if (M.ByteSizeLong() > O.protobufLimit) {
    std::vector<onnx::TensorProto *> Inline;
    for (auto &T : *M.mutable_graph()->mutable_initializer())
      if (T.data_location() != onnx::TensorProto::EXTERNAL && inlineBytes(T) >= O.minExternalBytes)
        Inline.push_back(&T);
    std::stable_sort(Inline.begin(), Inline.end(),
                     [](auto *A, auto *B) { return inlineBytes(*A) > inlineBytes(*B); });
    uint64_t Size = M.ByteSizeLong();
    for (onnx::TensorProto *T : Inline) {
      if (Size <= O.protobufLimit) break;
      uint64_t Before = T->ByteSizeLong();
      std::optional<std::string> Bytes = takeInlineBytes(*T);
      if (!Bytes) continue;
      ExternalDataFile::Piece P;
      P.offset = alignUp(F.size);
      P.length = Bytes->size();
      P.bytes = std::move(*Bytes);
      F.size = P.offset + P.length;
      F.pieces.push_back(std::move(P));
      setRef(*T, DataName, F.pieces.back().offset, F.pieces.back().length);
      Size = Size - Before + T->ByteSizeLong();
    }
    Size = M.ByteSizeLong();
    if (Size > kProtobufLimitBytes)
      return makeError(O.outputPath, ": the model is ", Size,
                       " bytes even with its large tensors stored externally, over protobuf's 2 GiB limit");
  }
  // One warning per written model, naming what is absent.
  int Files = 0, Tensors = 0;
  uint64_t Bytes = 0;
  std::string Names;
  for (auto &[Loc, CB] : Absent) {
    if (!CB.first) continue;
    if (Files < 3) Names += (Files ? ", '" : "'") + Loc + "'";
    ++Files;
    Tensors += CB.first;
    Bytes += CB.second;
  }
  if (Files)
    L.warnings.push_back(O.outputPath + " references " + std::to_string(Files) + " external data file" +
                         (Files > 1 ? "s" : "") + " (" + Names +
                         (Files > 3 ? " and " + std::to_string(Files - 3) + " more" : "") + "; " +
                         std::to_string(Tensors) + " tensors, " + std::to_string(Bytes) +
                         " bytes) absent from '" + O.sourceDir + "'; copy " + (Files > 1 ? "them" : "it") +
                         " to '" + OutDir + "' before loading it");
  if (!F.pieces.empty()) L.files.push_back(std::move(F));
  return L;
}

Error onnxp::writeExternalDataFiles(const ExternalDataLayout &L, OutputTransaction *Tx) {
  for (const ExternalDataFile &F : L.files) {
    // The temporary is created exclusively under an unpredictable name and
    // written through the descriptor that created it, never reopened by
    // name (issue 25, item 3).
    Expected<TempFile> T = Tx ? Tx->reserve(F.path, "external data file") : createTempBeside(F.path);
    if (!T) return T.takeError();
    int Fd = T->fd;
    const std::string Tmp = T->path;
    auto Fail = [&](const std::string &Why) {
      if (Fd >= 0) close(Fd);
      std::error_code EC;
      fs::remove(Tmp, EC);
      return makeError("cannot write '", F.path, "': ", Why);
    };
    std::vector<char> Buf(1 << 20);
    uint64_t Pos = 0;
    for (const ExternalDataFile::Piece &P : F.pieces) {
      std::fill(Buf.begin(), Buf.begin() + std::min<uint64_t>(Buf.size(), P.offset - Pos), 0);
      while (Pos < P.offset) {
        uint64_t N = std::min<uint64_t>(Buf.size(), P.offset - Pos);
        if (!writeAll(Fd, Buf.data(), N)) return Fail(std::strerror(errno));
        Pos += N;
      }
      if (P.sourcePath.empty()) {
        if (!writeAll(Fd, P.bytes.data(), P.bytes.size())) return Fail(std::strerror(errno));
      } else {
        // From the descriptor opened when the model was read (issue 39,
        // item 9), never by name again.
        if (!P.source) return Fail("no open source for '" + P.sourcePath + "'");
        uint64_t At = P.sourceOffset;
        for (uint64_t Left = P.length; Left;) {
          uint64_t N = std::min<uint64_t>(Buf.size(), Left);
          ssize_t Got = pread(P.source->fd, Buf.data(), N, static_cast<off_t>(At));
          if (Got < 0 && errno == EINTR) continue;
          if (Got < 0) return Fail("cannot read '" + P.sourcePath + "': " + std::strerror(errno));
          if (Got == 0) return Fail("'" + P.sourcePath + "' ended early (it changed while we read it?)");
          if (!writeAll(Fd, Buf.data(), static_cast<uint64_t>(Got))) return Fail(std::strerror(errno));
          Left -= static_cast<uint64_t>(Got);
          At += static_cast<uint64_t>(Got);
        }
      }
      Pos = P.offset + P.length;
    }
    int Closed = close(Fd);
    Fd = -1;
    if (Closed != 0) return Fail(std::strerror(errno));
    if (Tx) continue; // renamed with the run's other outputs
    std::error_code EC;
    fs::rename(Tmp, F.path, EC);
    if (EC) return Fail(EC.message());
  }
  return Error::success();
}

Error onnxp::checkWrittenReferences(const onnx::ModelProto &M, const std::string &OutputDir,
                                    const ExternalDataLayout &L, const std::string &What) {
  std::map<std::string, uint64_t> Planned;
  for (const ExternalDataFile &F : L.files) Planned[fs::path(F.path).lexically_normal().string()] = F.size;
  Error Result = Error::success();
  forEachExternalTensor(M, [&](const onnx::TensorProto &T) {
    if (Result) return;
    ExternalRef R = externalRef(T);
    if (std::string Why = escapeReason(R.location); !Why.empty()) {
      Result = makeInternalError(What, ": would reference '", R.location, "' for tensor '", T.name(),
                                 "' outside its folder: ", Why);
      return;
    }
    std::string Norm = fs::path(R.location).lexically_normal().string();
    if (L.absentLocations.count(Norm)) return;
    std::string File = join(OutputDir, R.location);
    uint64_t Size = 0;
    if (auto It = Planned.find(File); It != Planned.end()) {
      Size = It->second;
    } else {
      std::error_code EC;
      if (!fs::is_regular_file(File, EC)) {
        Result = makeError(What, ": external data of tensor '", T.name(), "' should be in '", File,
                           "', which does not exist");
        return;
      }
      Size = fs::file_size(File, EC);
    }
    uint64_t Length = R.length.value_or(0);
    if (R.offset > Size || Length > Size - R.offset)
      Result = makeError(What, ": external data of tensor '", T.name(), "' (offset ", R.offset, ", length ",
                         Length, ") runs past the end of '", File, "' (", Size, " bytes)");
  });
  return Result;
}

std::vector<std::string> onnxp::describeExternalData(const onnx::ModelProto &M, const std::string &ModelDir) {
  struct Use {
    int tensors = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string, Use> Files;
  forEachExternalTensor(M, [&](const onnx::TensorProto &T) {
    ExternalRef R = externalRef(T);
    Use &U = Files[R.location];
    ++U.tensors;
    U.bytes += R.length ? *R.length : declaredTensorBytes(T).value_or(0);
  });
  std::vector<std::string> Lines;
  for (auto &[Loc, U] : Files) {
    std::error_code EC;
    bool Present = !Loc.empty() && fs::is_regular_file(fs::path(ModelDir) / Loc, EC);
    Lines.push_back(Loc + ": " + std::to_string(U.tensors) + " tensors, " + std::to_string(U.bytes) +
                    " bytes, " + (Present ? "present" : "absent"));
  }
  return Lines;
}
