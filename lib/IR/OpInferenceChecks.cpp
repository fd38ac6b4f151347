//===- IR/OpInferenceChecks.cpp - What ONNX 1.12 inference trusts --------===//
//
// One row per op whose ONNX 1.12 inference function crashed on a one-node
// model (issue 39, item 1: every op and every attribute at extreme values).
// Each check states the operator specification's rule that the inference
// function assumes; a violated rule is an error naming the node, as for the
// convolution strides in SafeShapeInference.cpp (DESIGN.md).
//
//===----------------------------------------------------------------------===//
#include "OpInferenceChecks.h"

#include <onnx/defs/schema.h>

#include <limits>
#include <unordered_map>

using namespace onnxp;

namespace {
using RankFn = std::function<int64_t(int)>;

const onnx::AttributeProto *attr(const onnx::NodeProto &N, const char *Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name) return &A;
  return nullptr;
}

/// An INTS attribute's length must be Expected when it is given.
Error listLength(const onnx::NodeProto &N, const char *Name, int64_t Expected, const char *What,
                 const std::string &Where) {
  const onnx::AttributeProto *A = attr(N, Name);
  if (!A || A->ints_size() == Expected) return Error::success();
  return makeError(Where, ": attribute '", Name, "' has ", A->ints_size(), " values; it needs one per ", What,
                   " (", Expected, ")");
}

/// An axis attribute (default Default) must lie in [-Rank, Rank - 1].
Error axisInRange(const onnx::NodeProto &N, const char *Name, int64_t Default, int64_t Rank,
                  const std::string &Where) {
  const onnx::AttributeProto *A = attr(N, Name);
  int64_t Axis = A ? A->i() : Default;
  if (Rank < 0 || (Axis >= -Rank && Axis < Rank)) return Error::success();
  return makeError(Where, ": attribute '", Name, "' is ", Axis, " but input 0 has rank ", Rank,
                   "; it must be in [", -Rank, ", ", Rank - 1, "]");
}

Error rankIs(const RankFn &RankOf, int Input, int64_t Want, const char *What, const std::string &Where) {
  int64_t R = RankOf(Input);
  if (R < 0 || R == Want) return Error::success();
  return makeError(Where, ": input ", Input, " (", What, ") has rank ", R, "; it must have rank ", Want);
}

/// Scan (opset 8: sequence_lens first, then N state variables and M scan
/// inputs; opset 9 on: no sequence_lens). The inference function reads
/// num_scan_inputs without checking it is there and sizes its vectors with
/// inputs - num_scan_inputs (unsigned).
Error scanAttributes(const onnx::NodeProto &N, int Opset, const std::string &Where) {
  const onnx::AttributeProto *M = attr(N, "num_scan_inputs");
  if (!M) return makeError(Where, ": attribute 'num_scan_inputs' is required");
  int64_t Inputs = N.input_size() - (Opset < 9 ? 1 : 0);
  if (M->i() < 1 || M->i() > Inputs)
    return makeError(Where, ": attribute 'num_scan_inputs' is ", M->i(), " but the node has ", Inputs,
                     " state and scan inputs; it must be in [1, ", Inputs, "]");
  int64_t States = Inputs - M->i();
  if (N.output_size() < States)
    return makeError(Where, ": the node has ", N.output_size(), " outputs but ", States,
                     " state variables; each state variable needs its output");
  int64_t ScanOutputs = N.output_size() - States;
  ONNXP_RETURN_IF_ERROR(listLength(N, "scan_input_axes", M->i(), "scan input", Where));
  ONNXP_RETURN_IF_ERROR(listLength(N, "scan_input_directions", M->i(), "scan input", Where));
  ONNXP_RETURN_IF_ERROR(listLength(N, "directions", M->i(), "scan input", Where));
  ONNXP_RETURN_IF_ERROR(listLength(N, "scan_output_axes", ScanOutputs, "scan output", Where));
  ONNXP_RETURN_IF_ERROR(listLength(N, "scan_output_directions", ScanOutputs, "scan output", Where));
  const onnx::AttributeProto *Body = attr(N, "body");
  if (!Body || !Body->has_g()) return makeError(Where, ": attribute 'body' (a graph) is required");
  if (Body->g().input_size() != Inputs || Body->g().output_size() != N.output_size())
    return makeError(Where, ": the body has ", Body->g().input_size(), " inputs and ",
                     Body->g().output_size(), " outputs; the node has ", Inputs,
                     " state and scan inputs and ", N.output_size(), " outputs, and they must match");
  return Error::success();
}

/// Scan inputs are scanned along an axis of their own rank.
Error scanRanks(const onnx::NodeProto &N, const RankFn &RankOf, const std::string &Where) {
  const onnx::AttributeProto *M = attr(N, "num_scan_inputs");
  const onnx::AttributeProto *Axes = attr(N, "scan_input_axes");
  if (!M) return Error::success();
  for (int64_t J = 0; J < M->i(); ++J) {
    int Input = static_cast<int>(N.input_size() - M->i() + J);
    int64_t R = RankOf(Input);
    if (R < 0) continue;
    int64_t Axis = Axes && J < Axes->ints_size() ? Axes->ints(static_cast<int>(J)) : 0;
    if (Axis < -R || Axis >= R)
      return makeError(Where, ": scan input ", J, " has rank ", R, " but is scanned along axis ", Axis,
                       "; a scan input needs rank >= 1 and an axis in [", -R, ", ", R - 1, "]");
  }
  return Error::success();
}

/// DepthToSpace / SpaceToDepth divide or multiply the channels by
/// blocksize * blocksize: 2^32 squares to 0 (SIGFPE).
Error blocksizeAttribute(const onnx::NodeProto &N, int, const std::string &Where) {
  const onnx::AttributeProto *B = attr(N, "blocksize");
  if (!B) return makeError(Where, ": attribute 'blocksize' is required");
  constexpr int64_t Max = std::numeric_limits<int32_t>::max();
  if (B->i() < 1 || B->i() > Max)
    return makeError(Where, ": attribute 'blocksize' is ", B->i(), "; it must be in [1, ", Max, "]");
  return Error::success();
}

Error rank4Input(const onnx::NodeProto &, const RankFn &RankOf, const std::string &Where) {
  return rankIs(RankOf, 0, 4, "N, C, H, W", Where);
}

/// STFT (opset 17): signal [batch, length, 1 or 2], frame_step a scalar,
/// window [window_length], frame_length a scalar; inference indexes the
/// signal's dims 1 and 2 without checking its rank.
Error stftRanks(const onnx::NodeProto &N, const RankFn &RankOf, const std::string &Where) {
  ONNXP_RETURN_IF_ERROR(rankIs(RankOf, 0, 3, "signal: batch, length, 1 or 2", Where));
  ONNXP_RETURN_IF_ERROR(rankIs(RankOf, 1, 0, "frame_step: a scalar", Where));
  if (N.input_size() > 2 && !N.input(2).empty()) ONNXP_RETURN_IF_ERROR(rankIs(RankOf, 2, 1, "window", Where));
  if (N.input_size() > 3 && !N.input(3).empty())
    ONNXP_RETURN_IF_ERROR(rankIs(RankOf, 3, 0, "frame_length: a scalar", Where));
  return Error::success();
}

/// LayerNormalization's inference computes the reduced shape from axis
/// without checking it against the input's rank (a scalar: SIGSEGV).
Error layerNormRanks(const onnx::NodeProto &N, const RankFn &RankOf, const std::string &Where) {
  int64_t R = RankOf(0);
  if (R == 0) return makeError(Where, ": input 0 is a scalar; layer normalization needs rank >= 1");
  return axisInRange(N, "axis", -1, R, Where);
}

struct OpRule {
  Error (*attributes)(const onnx::NodeProto &, int, const std::string &);
  Error (*ranks)(const onnx::NodeProto &, const RankFn &, const std::string &);
};

const OpRule *ruleOf(const onnx::NodeProto &N) {
  if (!N.domain().empty() && N.domain() != "ai.onnx") return nullptr;
  static const std::unordered_map<std::string, OpRule> Rules = {
      {"Scan", {scanAttributes, scanRanks}},
      {"DepthToSpace", {blocksizeAttribute, rank4Input}},
      {"SpaceToDepth", {blocksizeAttribute, rank4Input}},
      {"STFT", {nullptr, stftRanks}},
      {"LayerNormalization", {nullptr, layerNormRanks}},
  };
  auto It = Rules.find(N.op_type());
  return It == Rules.end() ? nullptr : &It->second;
}

/// Elements the dims claim, or -1 when a dim is negative or the product
/// passes 2^63.
int64_t claimedElements(const onnx::TensorProto &T) {
  int64_t N = 1;
  for (int64_t D : T.dims()) {
    if (D < 0) return -1;
    if (D != 0 && N > std::numeric_limits<int64_t>::max() / D) return -1;
    N *= D;
  }
  return N;
}

/// Elements held in the typed field the data type uses (raw_data aside).
int64_t typedElements(const onnx::TensorProto &T) {
  using TP = onnx::TensorProto;
  switch (T.data_type()) {
  case TP::FLOAT: return T.float_data_size();
  case TP::DOUBLE: return T.double_data_size();
  case TP::INT64: return T.int64_data_size();
  case TP::UINT32:
  case TP::UINT64: return T.uint64_data_size();
  case TP::STRING: return T.string_data_size();
  case TP::COMPLEX64: return T.float_data_size() / 2;
  case TP::COMPLEX128: return T.double_data_size() / 2;
  default: return T.int32_data_size(); // int8..int32, uint8, uint16, bool, float16, bfloat16
  }
}
} // namespace

Error onnxp::checkOpAttributes(const onnx::NodeProto &N, int Opset, const std::string &Where) {
  const OpRule *R = ruleOf(N);
  return R && R->attributes ? R->attributes(N, Opset, Where) : Error::success();
}

Error onnxp::checkOpInputRanks(const onnx::NodeProto &N, const RankFn &RankOf, const std::string &Where) {
  const OpRule *R = ruleOf(N);
  return R && R->ranks ? R->ranks(N, RankOf, Where) : Error::success();
}

bool onnxp::needsRankChecks(const onnx::NodeProto &N) {
  const OpRule *R = ruleOf(N);
  return R && R->ranks;
}

Error onnxp::checkInlineTensorData(const onnx::TensorProto &T, const std::string &What) {
  if (T.data_location() == onnx::TensorProto::EXTERNAL) return Error::success(); // checked by ExternalData
  int64_t Claimed = claimedElements(T);
  if (Claimed < 0) return makeError(What, ": dims have a negative value or multiply past 2^63 elements");
  if (T.has_raw_data()) {
    if (T.data_type() == onnx::TensorProto::STRING)
      return makeError(What, ": a string tensor cannot hold raw_data");
    int Bytes = onnx::TensorProto::UNDEFINED;
    switch (T.data_type()) {
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8: Bytes = 1; break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: Bytes = 2; break;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::FLOAT: Bytes = 4; break;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64: Bytes = 8; break;
    case onnx::TensorProto::COMPLEX128: Bytes = 16; break;
    default: return Error::success(); // a type we do not size: ONNX Runtime judges it
    }
    uint64_t Want = static_cast<uint64_t>(Claimed) * static_cast<uint64_t>(Bytes);
    if (Claimed > std::numeric_limits<int64_t>::max() / Bytes || T.raw_data().size() != Want)
      return makeError(What, ": raw_data holds ", T.raw_data().size(), " bytes but its dims need ",
                       Claimed > std::numeric_limits<int64_t>::max() / Bytes ? std::string("more than 2^63")
                                                                             : std::to_string(Want));
    return Error::success();
  }
  int64_t Held = typedElements(T);
  if (Held != Claimed) return makeError(What, ": holds ", Held, " elements but its dims need ", Claimed);
  return Error::success();
}
