//===- Import/PiperInstanceReader.cpp - Piper's input, every TMPC --------===//
//
// The checks are those of Piper's Instance::checkInputCorrectness (algo.cpp):
// a device count in [1, 10000], positive bandwidth, memory and micro-batch
// count, non-negative costs, distinct TMPC ids per (layer, t), and syncTimeFw
// / syncTimeBw naming exactly the layer's incoming / outgoing edges.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/PiperInstanceReader.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
#include <set>
#include <stdexcept>

using nlohmann::json;
using namespace onnxp;

namespace {
constexpr int kMaxDevices = 10000; // Piper's DEVICES_LIMIT

long integerOf(const json &V, const char *What) {
  if (!V.is_number_integer() || (V.is_number_unsigned() && V.get<uint64_t>() > uint64_t(LONG_MAX)))
    throw std::runtime_error(std::string(What) + " must be an integer, got " + V.dump());
  return V.get<long>();
}

double nonNegative(const json &V, const char *What) {
  if (!V.is_number()) throw std::runtime_error(std::string(What) + " must be a number, got " + V.dump());
  const double X = V.get<double>();
  if (!std::isfinite(X) || X < 0) throw std::runtime_error(std::string(What) + " must be finite and >= 0");
  return X;
}

/// syncTimeFw / syncTimeBw: keys are file ids of the other ends.
std::map<int, double> syncMap(const json &J, const std::map<long, int> &Index, const char *What) {
  std::map<int, double> Out;
  for (auto It = J.begin(); It != J.end(); ++It) {
    size_t Pos = 0;
    long Id = 0;
    try {
      Id = std::stol(It.key(), &Pos);
    } catch (...) { Pos = 0; }
    if (Pos == 0 || Pos != It.key().size() || !Index.count(Id))
      throw std::runtime_error(std::string(What) + " names '" + It.key() + "', not a node id");
    Out[Index.at(Id)] = nonNegative(It.value(), What);
  }
  return Out;
}

PiperTmpc readTmpc(const json &J, const std::map<long, int> &Index) {
  PiperTmpc T;
  T.id = J.at("id").get<std::string>();
  if (T.id.empty()) throw std::runtime_error("a TMPC id is empty");
  T.timePerSample = nonNegative(J.at("timePerSample"), "timePerSample");
  T.parameterSize = nonNegative(J.at("parameterSize"), "parameterSize");
  T.memoryA = nonNegative(J.at("memoryUsageA"), "memoryUsageA");
  T.memoryB = nonNegative(J.at("memoryUsageB"), "memoryUsageB");
  T.syncFw = syncMap(J.at("syncTimeFw"), Index, "syncTimeFw");
  T.syncBw = syncMap(J.at("syncTimeBw"), Index, "syncTimeBw");
  return T;
}

/// Every TMPC's sync maps name exactly the layer's edges (Piper's check).
Error checkSyncMaps(const PiperInstance &I, const std::string &Source) {
  std::vector<std::set<int>> In(I.layers.size()), Out(I.layers.size());
  for (const PiperEdge &E : I.edges) {
    In[E.to].insert(E.from);
    Out[E.from].insert(E.to);
  }
  for (size_t V = 0; V < I.layers.size(); ++V)
    for (const auto &[T, Options] : I.layers[V].tmpcs)
      for (const PiperTmpc &C : Options) {
        std::set<int> Fw, Bw;
        for (const auto &[U, X] : C.syncFw) Fw.insert(U);
        for (const auto &[W, X] : C.syncBw) Bw.insert(W);
        if (Fw != In[V] || Bw != Out[V])
          return makeError(Source, ": node ", I.layers[V].fileId, ", TMPC '", C.id, "' at t = ", T,
                           ": syncTimeFw/syncTimeBw must name exactly the node's incoming/outgoing edges");
      }
  return Error::success();
}

Error readLayers(const json &Nodes, PiperInstance &I, const std::string &Source) {
  std::map<long, int> Index;
  for (const json &N : Nodes) {
    const long Id = integerOf(N.at("id"), "a node id");
    if (!Index.emplace(Id, static_cast<int>(Index.size())).second)
      return makeError(Source, ": duplicate node id ", Id);
  }
  for (const json &N : Nodes) {
    PiperLayer L;
    L.fileId = integerOf(N.at("id"), "a node id");
    L.name = N.value("name", std::string());
    for (auto It = N.at("TMPCs").begin(); It != N.at("TMPCs").end(); ++It) {
      size_t Pos = 0;
      long T = 0;
      try {
        T = std::stol(It.key(), &Pos);
      } catch (...) { Pos = 0; }
      if (Pos == 0 || Pos != It.key().size() || T < 1 || T > kMaxDevices)
        return makeError(Source, ": node ", L.fileId, ": TMPCs key '", It.key(),
                         "' is not a tensor-parallel degree in [1, ", kMaxDevices, "]");
      std::vector<PiperTmpc> &Options = L.tmpcs[static_cast<int>(T)];
      std::set<std::string> Ids;
      for (const json &C : It.value()) {
        Options.push_back(readTmpc(C, Index));
        if (!Ids.insert(Options.back().id).second)
          return makeError(Source, ": node ", L.fileId, ": TMPC id '", Options.back().id,
                           "' twice at t = ", T);
      }
    }
    I.layers.push_back(std::move(L));
  }
  return Error::success();
}

Error readEdges(const json &Edges, PiperInstance &I, const std::string &Source) {
  std::map<long, int> Index;
  for (size_t V = 0; V < I.layers.size(); ++V) Index[I.layers[V].fileId] = static_cast<int>(V);
  std::set<std::pair<int, int>> Seen;
  for (const json &E : Edges) {
    const long S = integerOf(E.at("sourceId"), "sourceId"), D = integerOf(E.at("destId"), "destId");
    if (!Index.count(S) || !Index.count(D))
      return makeError(Source, ": edge ", S, " -> ", D, " names an unknown node");
    PiperEdge P{Index[S], Index[D], nonNegative(E.at("communicationCost"), "communicationCost")};
    if (!Seen.insert({P.from, P.to}).second) return makeError(Source, ": edge ", S, " -> ", D, " twice");
    I.edges.push_back(P);
  }
  return Error::success();
}
} // namespace

Expected<PiperInstance> onnxp::parsePiperInstance(const std::string &Text, const std::string &Source) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object()) return makeError(Source, ": not a JSON object");
  PiperInstance I;
  try {
    const long K = integerOf(J.at("maxDevices"), "maxDevices");
    const long N = integerOf(J.at("mbsInBatch"), "mbsInBatch");
    if (K < 1 || K > kMaxDevices)
      return makeError(Source, ": maxDevices ", K, " is not in [1, ", kMaxDevices, "]");
    if (N < 1 || N > INT_MAX) return makeError(Source, ": mbsInBatch ", N, " must be a positive int");
    I.maxDevices = static_cast<int>(K);
    I.mbsInBatch = static_cast<int>(N);
    I.maxMemoryPerDevice = nonNegative(J.at("maxMemoryPerDevice"), "maxMemoryPerDevice");
    I.bandwidth = nonNegative(J.at("bandwidth"), "bandwidth");
    if (!(I.maxMemoryPerDevice > 0) || !(I.bandwidth > 0))
      return makeError(Source, ": maxMemoryPerDevice and bandwidth must be positive");
    if (!J.at("nodes").is_array() || J.at("nodes").empty() || !J.at("edges").is_array())
      return makeError(Source, ": a Piper input needs a non-empty 'nodes' array and an 'edges' array");
    ONNXP_RETURN_IF_ERROR(readLayers(J.at("nodes"), I, Source));
    ONNXP_RETURN_IF_ERROR(readEdges(J.at("edges"), I, Source));
  } catch (const std::exception &Ex) { return makeError(Source, ": malformed Piper input: ", Ex.what()); }
  if (piperTopologicalOrder(I).empty()) return makeError(Source, ": the Piper graph has a cycle");
  ONNXP_RETURN_IF_ERROR(checkSyncMaps(I, Source));
  return I;
}

Error onnxp::insertPiperTransformerLayers(PiperInstance &I, int Count) {
  const std::string Name = "ParallelTransformerLayer";
  for (int Added = 0; Added < Count; ++Added) {
    const int N = static_cast<int>(I.layers.size());
    std::vector<int> Prev(N, -1), Next(N, -1);
    for (const PiperEdge &E : I.edges)
      if (I.layers[E.from].name == Name && I.layers[E.to].name == Name) {
        Prev[E.to] = E.from;
        Next[E.from] = E.to;
      }
    // Piper's choice (an unordered_set's first match) copies, in effect, the
    // last middle layer: every copy lands right before the last transformer.
    int V = -1;
    for (int W : piperTopologicalOrder(I))
      if (I.layers[W].name == Name && Prev[W] >= 0 && Next[W] >= 0) V = W;
    if (V < 0) return makeError("no transformer layer with a transformer before and after it to copy");
    const int S = Next[V], New = N;
    PiperLayer Copy = I.layers[V];
    Copy.fileId = 1000000000L + Added;
    // v -> s becomes v -> new -> s with the same bytes; the sync costs move along.
    double Bytes = 0;
    for (PiperEdge &E : I.edges)
      if (E.from == V && E.to == S) {
        E.to = New;
        Bytes = E.bytes;
      }
    I.edges.push_back({New, S, Bytes});
    for (auto &[T, Options] : I.layers[V].tmpcs)
      for (PiperTmpc &C : Options) {
        C.syncBw[New] = C.syncBw.at(S);
        C.syncBw.erase(S);
      }
    for (auto &[T, Options] : I.layers[S].tmpcs)
      for (PiperTmpc &C : Options) {
        C.syncFw[New] = C.syncFw.at(V);
        C.syncFw.erase(V);
      }
    for (auto &[T, Options] : Copy.tmpcs)
      for (PiperTmpc &C : Options) {
        const double Fw = C.syncFw.at(Prev[V]), Bw = C.syncBw.at(S);
        C.syncFw = {{V, Fw}};
        C.syncBw = {{S, Bw}};
      }
    I.layers.push_back(std::move(Copy));
  }
  return Error::success();
}
