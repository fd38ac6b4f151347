//===- Import/ChainJson.cpp - Chain JSON reader and writer --------------===//
//
// nlohmann::json with exceptions turned into Errors at this boundary; every
// message names the file and, for block fields, the block index and name.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/ChainJson.h"

#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace onnxp;
using nlohmann::ordered_json;

namespace {

Expected<double> number(const ordered_json &Obj, const char *Key, const std::string &Where, bool Required,
                        double Default) {
  auto It = Obj.find(Key);
  if (It == Obj.end()) {
    if (Required) return makeError(Where, ": missing \"", Key, "\"");
    return Default;
  }
  if (!It->is_number()) return makeError(Where, ": \"", Key, "\" must be a number");
  return It->get<double>();
}

/// Issue 35: optional "backwardInputTime" (B) and "backwardWeightTime" (W)
/// split "backwardTime"; absent, the whole backward is B. Given both, they
/// must add up to backwardTime; given one, the other is the rest.
Error readBackwardSplit(const ordered_json &B, const std::string &Where, ChainBlock &Blk) {
  const bool HasI = B.contains("backwardInputTime"), HasW = B.contains("backwardWeightTime");
  if (!HasI && !HasW) return Error::success();
  Expected<double> I = number(B, "backwardInputTime", Where, false, 0);
  if (!I) return I.takeError();
  Expected<double> W = number(B, "backwardWeightTime", Where, false, 0);
  if (!W) return W.takeError();
  for (double V : {*I, *W})
    if (!(V >= 0) || !std::isfinite(V))
      return makeError(Where, ": \"backwardInputTime\" and \"backwardWeightTime\" must be finite and >= 0");
  const double Total = Blk.backwardTime;
  if (HasI && HasW && std::fabs(*I + *W - Total) > 1e-9 * std::max(1.0, Total))
    return makeError(Where, ": \"backwardInputTime\" + \"backwardWeightTime\" (", *I + *W,
                     ") must equal \"backwardTime\" (", Total, ")");
  if (!HasW && *I > Total * (1 + 1e-9))
    return makeError(Where, ": \"backwardInputTime\" (", *I, ") is more than \"backwardTime\" (", Total, ")");
  Blk.backwardWeightTime = HasW ? *W : std::max(0.0, Total - *I);
  return Error::success();
}

} // namespace

Expected<Chain> onnxp::parseChainJson(const std::string &Text, const std::string &Source) {
  ordered_json J;
  try {
    J = ordered_json::parse(Text);
  } catch (const std::exception &E) { return makeError(Source, ": not valid JSON: ", E.what()); }
  if (!J.is_object()) return makeError(Source, ": a chain file is a JSON object");
  if (auto F = J.find("format"); F != J.end() && (!F->is_string() || *F != "onnx-partition-chain"))
    return makeError(Source, ": \"format\" must be \"onnx-partition-chain\"");
  if (auto V = J.find("version"); V != J.end() && (!V->is_number_integer() || *V != 1))
    return makeError(Source, ": unsupported chain format version (this tool reads version 1)");
  if (auto U = J.find("units"); U != J.end()) {
    // Checked by hand: value() throws a bare type_error on a non-string.
    auto Is = [&](const char *Key, const char *Want) {
      auto F = U->find(Key);
      return F == U->end() || (F->is_string() && *F == Want);
    };
    if (!U->is_object() || !Is("time", "ms") || !Is("size", "bytes"))
      return makeError(Source, ": \"units\" must be {\"time\": \"ms\", \"size\": \"bytes\"}");
  }
  Chain C;
  C.sourceName = Source;
  C.name = Source;
  if (auto N = J.find("name"); N != J.end()) {
    if (!N->is_string()) return makeError(Source, ": \"name\" must be a string");
    C.name = N->get<std::string>();
  }
  if (auto S = J.find("source"); S != J.end() && S->is_string()) C.sourceName = S->get<std::string>();
  Expected<double> In = number(J, "inputBytes", Source, false, 0);
  if (!In) return In.takeError();
  C.inputBytes = *In;
  auto Blocks = J.find("blocks");
  if (Blocks == J.end() || !Blocks->is_array()) return makeError(Source, ": missing \"blocks\" array");
  for (size_t I = 0; I < Blocks->size(); ++I) {
    const ordered_json &B = (*Blocks)[I];
    std::string Where = Source + ": block " + std::to_string(I + 1);
    if (!B.is_object()) return makeError(Where, ": must be an object");
    ChainBlock Blk;
    if (auto N = B.find("name"); N != B.end()) {
      if (!N->is_string()) return makeError(Where, ": \"name\" must be a string");
      Blk.name = N->get<std::string>();
      Where += " '" + Blk.name + "'";
    } else {
      Blk.name = "block" + std::to_string(I + 1);
    }
    struct Field {
      const char *Key;
      double *Slot;
      bool Required;
    } Fields[] = {{"forwardTime", &Blk.forwardTime, true},
                  {"backwardTime", &Blk.backwardTime, true},
                  {"outputBytes", &Blk.outputBytes, true},
                  {"weightBytes", &Blk.weightBytes, true},
                  {"storedBytes", &Blk.storedBytes, false},
                  {"forwardOverhead", &Blk.forwardOverhead, false},
                  {"backwardOverhead", &Blk.backwardOverhead, false},
                  {"frozenBytes", &Blk.frozenBytes, false}};
    // Absent optional fields are NaN here, never a number a file could
    // give: `storedBytes: -1` is a negative size, not "absent" (issue 25).
    for (const Field &F : Fields) {
      Expected<double> V = number(B, F.Key, Where, F.Required, NAN);
      if (!V) return V.takeError();
      *F.Slot = *V;
    }
    if (std::isnan(Blk.storedBytes) && !B.contains("storedBytes")) Blk.storedBytes = Blk.outputBytes;
    if (std::isnan(Blk.forwardOverhead) && !B.contains("forwardOverhead")) Blk.forwardOverhead = 0;
    if (std::isnan(Blk.backwardOverhead) && !B.contains("backwardOverhead")) Blk.backwardOverhead = 0;
    if (std::isnan(Blk.frozenBytes) && !B.contains("frozenBytes")) Blk.frozenBytes = 0;
    ONNXP_RETURN_IF_ERROR(readBackwardSplit(B, Where, Blk));
    if (auto N = B.find("nodes"); N != B.end()) {
      if (!N->is_array()) return makeError(Where, ": \"nodes\" must be an array of node ids");
      for (const auto &Id : *N) {
        if (!Id.is_number_integer() || Id.get<long long>() < 0 ||
            Id.get<long long>() > std::numeric_limits<int>::max())
          return makeError(Where, ": \"nodes\" must hold integers from 0 to ",
                           std::numeric_limits<int>::max());
        Blk.nodes.push_back(Id.get<int>());
      }
    }
    if (auto S = B.find("sources"); S != B.end()) {
      if (!S->is_array()) return makeError(Where, ": \"sources\" must be an array of names");
      for (const auto &Name : *S) {
        if (!Name.is_string()) return makeError(Where, ": \"sources\" must hold strings");
        Blk.sources.push_back(Name.get<std::string>());
      }
    }
    C.blocks.push_back(std::move(Blk));
  }
  // Issue 33: a DAG of blocks ([[from, to], ...], from < to); absent: a path.
  if (auto E = J.find("edges"); E != J.end()) {
    if (!E->is_array()) return makeError(Source, ": \"edges\" must be an array of [from, to] block indices");
    for (const auto &Pair : *E) {
      if (!Pair.is_array() || Pair.size() != 2 || !Pair[0].is_number_integer() ||
          !Pair[1].is_number_integer() || Pair[0].get<long long>() < 0 ||
          Pair[0].get<long long>() >= (long long)C.blocks.size() || Pair[1].get<long long>() < 0 ||
          Pair[1].get<long long>() >= (long long)C.blocks.size())
        return makeError(Source, ": \"edges\" must hold [from, to] pairs of block indices 0..",
                         C.blocks.size() - 1);
      C.edges.emplace_back(Pair[0].get<int>(), Pair[1].get<int>());
    }
  }
  ONNXP_RETURN_IF_ERROR(C.validate());
  return C;
}

Expected<Chain> onnxp::loadChainJson(const std::string &Path) {
  Expected<std::string> Text = readFile(Path, kMaxModelFileBytes, "a chain file");
  if (!Text) return Text.takeError();
  return parseChainJson(*Text, Path);
}

std::string onnxp::chainToJson(const Chain &C) {
  ordered_json J;
  J["format"] = "onnx-partition-chain";
  J["version"] = 1;
  J["name"] = C.name;
  J["source"] = C.sourceName;
  J["units"] = {{"time", "ms"}, {"size", "bytes"}};
  J["inputBytes"] = C.inputBytes;
  J["totals"] = {{"blocks", C.size()},
                 {"forwardTime", C.totalForwardTime()},
                 {"backwardTime", C.totalBackwardTime()},
                 {"weightBytes", C.totalWeightBytes()}};
  ordered_json Blocks = ordered_json::array();
  for (const ChainBlock &B : C.blocks) {
    ordered_json Blk = {{"name", B.name},
                        {"forwardTime", B.forwardTime},
                        {"backwardTime", B.backwardTime},
                        {"outputBytes", B.outputBytes},
                        {"storedBytes", B.storedBytes},
                        {"weightBytes", B.weightBytes},
                        {"forwardOverhead", B.forwardOverhead},
                        {"backwardOverhead", B.backwardOverhead},
                        {"nodes", B.nodes},
                        {"sources", B.sources}};
    // Issue 35: the B/W split only where the source made one, so chains
    // without it are written as before.
    if (B.frozenBytes > 0) Blk["frozenBytes"] = B.frozenBytes; // issue 37: absent, every weight trains
    if (B.backwardWeightTime > 0) {
      Blk["backwardInputTime"] = B.backwardTime - B.backwardWeightTime;
      Blk["backwardWeightTime"] = B.backwardWeightTime;
    }
    Blocks.push_back(std::move(Blk));
  }
  J["blocks"] = std::move(Blocks);
  if (!C.edges.empty()) {
    ordered_json Edges = ordered_json::array();
    for (auto [U, V] : C.edges) Edges.push_back({U, V});
    J["edges"] = std::move(Edges);
  }
  // Names come from files (a profile's layer ids may hold any byte): invalid
  // UTF-8 becomes U+FFFD instead of a type_error (issue 25, fuzz-pipedream).
  return J.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}
