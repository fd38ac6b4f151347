//===- IR/ExternalData.h - Tensors stored beside the model -------*- C++ -*-===//
//
// ONNX keeps large tensors outside the protobuf (TensorProto.data_location =
// EXTERNAL, external_data {location, offset, length}), with `location`
// relative to the model's folder. This file owns every rule about those
// references (DESIGN.md, "Facts about the output"; issue 15 item 1 and
// issue 16 item 2):
//  - reading: a location must be relative and stay inside the model's folder
//    (ONNX Runtime 1.30 refuses one that escapes it), and it is resolved
//    against the model's folder, never the current directory;
//  - checking: ONNX 1.12's checker resolves locations against the current
//    directory and its shape inference cannot read external tensors, so both
//    run on a copy whose external initializers are graph inputs, and the
//    references are checked here against the output's folder instead;
//  - writing: a model written into its source's folder reuses the source's
//    data files; written anywhere else, it gets its own data file beside it
//    holding only the tensors it uses; data that is absent is referenced
//    under the same relative name in the new folder (with a warning), so
//    copying the file there makes the output loadable; a model whose
//    protobuf would exceed 2 GiB moves its large inline tensors out too.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_EXTERNALDATA_H
#define ONNXP_IR_EXTERNALDATA_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxp {

class OutputTransaction;

/// Protobuf refuses to parse or serialize messages of 2 GiB or more.
constexpr uint64_t kProtobufLimitBytes = (uint64_t(1) << 31) - 1;

/// One external reference as the TensorProto states it.
struct ExternalRef {
  std::string tensor;
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length; ///< absent: the rest of the file
  /// The "offset" or "length" value that is not a plain decimal integer
  /// ("abc", "-1", "1e3"), or "" (issue 25: "abc" was read as 0).
  std::string malformed;
};

/// The reference T states (T must have data_location EXTERNAL).
ExternalRef externalRef(const onnx::TensorProto &T);

/// Bytes T's dims and element type declare, or nullopt (strings, unknown type).
std::optional<uint64_t> declaredTensorBytes(const onnx::TensorProto &T);

/// Calls F on every tensor of M stored externally: initializers and sparse
/// initializers of every graph and subgraph, tensor attributes (Constant),
/// and the same inside model-local functions.
void forEachExternalTensor(onnx::ModelProto &M, const std::function<void(onnx::TensorProto &)> &F);
void forEachExternalTensor(const onnx::ModelProto &M,
                           const std::function<void(const onnx::TensorProto &)> &F);

/// The folder a model file's external locations are relative to ("." for a
/// bare file name).
std::string modelFolder(const std::string &ModelPath);

/// Issue 16 item 2: every location is non-empty, relative, and inside the
/// model's folder after normalization ("a/../b" is fine, "../b" and "/b"
/// are not). The error names the file, the tensor and the location.
Error checkExternalLocations(const onnx::ModelProto &M, const std::string &ModelPath);

/// References whose file is absent (resolved against ModelDir).
std::vector<ExternalRef> absentExternalData(const onnx::ModelProto &M, const std::string &ModelDir);

/// One external data file of the input model, opened once when the model
/// is read and confined to its folder on the open descriptor (issue 39,
/// item 9): every later size check and copy reads this descriptor, so a
/// file replaced (by a link to somewhere else, say) while the run solves is
/// never read. The descriptor closes with the last reference.
struct ExternalSourceFile {
  int fd = -1;
  uint64_t size = 0;
  std::string path; ///< the model's folder joined with the location, for messages
  ExternalSourceFile() = default;
  ExternalSourceFile(const ExternalSourceFile &) = delete;
  ExternalSourceFile &operator=(const ExternalSourceFile &) = delete;
  ~ExternalSourceFile();
};

/// Normalized location -> its opened file. A location whose file is absent
/// (or not a regular file) has no entry: its data is absent.
using ExternalSources = std::map<std::string, std::shared_ptr<const ExternalSourceFile>>;

/// Opens every file M's external locations name, relative to ModelDir.
/// Fails when an opened file resolves outside ModelDir (a link swapped in
/// since checkExternalLocations) or when the process has no descriptor left.
Expected<ExternalSources> openExternalSources(const onnx::ModelProto &M, const std::string &ModelDir);

/// A copy of M that ONNX's checker and shape inference can take whatever
/// the data files: external initializers, and Constant nodes whose value is
/// external, become graph inputs of the same type and shape (so inference
/// treats them as data it cannot see). External tensors inside subgraphs
/// and other attributes (rare) are left as they are.
onnx::ModelProto withoutExternalData(const onnx::ModelProto &M);

/// One data file to write: pieces copied from a source file, or bytes.
struct ExternalDataFile {
  std::string path;
  struct Piece {
    uint64_t offset = 0;                              ///< where it goes in the new file
    std::string sourcePath;                           ///< copy from here (named in messages) ...
    std::shared_ptr<const ExternalSourceFile> source; ///< ... through this descriptor
    uint64_t sourceOffset = 0;
    uint64_t length = 0; ///< ... this many bytes
    std::string bytes;   ///< or write these (inline tensors moved out)
  };
  std::vector<Piece> pieces;
  uint64_t size = 0;
};

struct ExternalDataLayout {
  std::vector<ExternalDataFile> files;
  /// Locations the written model references but nobody writes: absent in
  /// the source too. One warning per location in `warnings`.
  std::set<std::string> absentLocations;
  std::vector<std::string> warnings;
};

struct ExternalWriteOptions {
  /// Folder the model's current locations are relative to.
  std::string sourceDir = ".";
  /// The model file that will be written.
  std::string outputPath;
  /// Serialized size above which inline tensors move to the data file.
  uint64_t protobufLimit = kProtobufLimitBytes - (uint64_t(64) << 20);
  /// Inline tensors smaller than this stay inline when moving tensors out.
  uint64_t minExternalBytes = 1024;
  /// The source's data files as opened when the model was read
  /// (OnnxModel::externalSources); null: opened here.
  const ExternalSources *sources = nullptr;
};

/// Rewrites M's external references for writing M at O.outputPath (see the
/// file comment) and returns the data files that must be written with it.
/// Fails, before anything is written, when a present source file is too
/// short for a reference or the result would still not fit a protobuf.
Expected<ExternalDataLayout> layoutExternalData(onnx::ModelProto &M, const ExternalWriteOptions &O);

/// Writes each file through a temporary and a rename.
/// With Tx, each data file goes to a temporary of the transaction and is
/// renamed with the run's other outputs; without, it is renamed at once.
Error writeExternalDataFiles(const ExternalDataLayout &L, OutputTransaction *Tx = nullptr);

/// The check ONNX's checker would make with the right base: every location
/// of M is confined to OutputDir's tree and names a file there (one L will
/// write, or one already present) long enough for the reference, or is one
/// of L's absent locations. What names the output in messages.
Error checkWrittenReferences(const onnx::ModelProto &M, const std::string &OutputDir,
                             const ExternalDataLayout &L, const std::string &What);

/// One line per data file M references: location, tensors, bytes, and
/// whether it is present beside the model (for `inspect`).
std::vector<std::string> describeExternalData(const onnx::ModelProto &M, const std::string &ModelDir);

} // namespace onnxp

#endif // ONNXP_IR_EXTERNALDATA_H
