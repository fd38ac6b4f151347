//===- Import/PipeDreamProfile.cpp - PipeDream profiler graphs -----------===//
//
// Line format (workloads/README.md):
//   nodeN -- Description -- forward_compute_time=F, backward_compute_time=B,
//            activation_size=A, parameter_size=P        (A may be "[a; b; c]")
//   <TAB>nodeX -- nodeY
// Node lines are not in topological order and edges may name layers defined
// later, so edges are resolved once the whole file is read.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/PipeDreamProfile.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <queue>
#include <sstream>

using namespace onnxp;

namespace {

/// Profiles are small (PipeDream's largest has a few hundred layers); a cap
/// keeps a hostile file from sizing allocations.
constexpr size_t kMaxLayers = 1000000;

std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r");
  if (B == std::string::npos) return "";
  size_t E = S.find_last_not_of(" \t\r");
  return S.substr(B, E - B + 1);
}

std::vector<std::string> splitOn(const std::string &S, const std::string &Sep) {
  std::vector<std::string> Parts;
  size_t Start = 0;
  while (true) {
    size_t P = S.find(Sep, Start);
    if (P == std::string::npos) {
      Parts.push_back(S.substr(Start));
      return Parts;
    }
    Parts.push_back(S.substr(Start, P - Start));
    Start = P + Sep.size();
  }
}

/// A finite non-negative number, or a list "[a; b; c]" of them (summed).
bool parseValue(const std::string &Text, double &Out) {
  std::string T = trim(Text);
  if (T.size() >= 2 && T.front() == '[' && T.back() == ']') {
    double Sum = 0;
    for (const std::string &Part : splitOn(T.substr(1, T.size() - 2), ";")) {
      double V;
      if (!parseValue(Part, V)) return false;
      Sum += V;
    }
    Out = Sum;
    return true;
  }
  if (T.empty()) return false;
  char *End = nullptr;
  Out = std::strtod(T.c_str(), &End);
  return End == T.c_str() + T.size() && std::isfinite(Out) && Out >= 0;
}

/// Numeric part of "node17" (for the tie-break of the topological order).
long numericId(const std::string &Id, long Fallback) {
  size_t P = Id.find_first_of("0123456789");
  if (P == std::string::npos) return Fallback;
  char *End = nullptr;
  long V = std::strtol(Id.c_str() + P, &End, 10);
  return *End == '\0' ? V : Fallback;
}

} // namespace

std::string PipeDreamLayer::kind() const { return description.substr(0, description.find('(')); }

bool onnxp::looksLikePipeDreamProfile(const std::string &Text) {
  std::string First = Text.substr(0, Text.find('\n'));
  return First.rfind("node", 0) == 0 && First.find(" -- ") != std::string::npos &&
         First.find("forward_compute_time=") != std::string::npos;
}

Expected<PipeDreamProfile> onnxp::parsePipeDreamProfile(const std::string &Text, const std::string &Source) {
  PipeDreamProfile Prof;
  Prof.sourceName = Source;
  std::map<std::string, int> ById;
  std::vector<std::pair<std::string, std::string>> NamedEdges;
  std::vector<size_t> EdgeLines;
  std::istringstream In(Text);
  std::string Line;
  size_t LineNo = 0;
  while (std::getline(In, Line)) {
    ++LineNo;
    if (trim(Line).empty()) continue;
    auto Where = [&] { return Source + ":" + std::to_string(LineNo); };
    if (Line[0] == '\t') {
      std::vector<std::string> Ends = splitOn(Line.substr(1), " -- ");
      if (Ends.size() != 2 || trim(Ends[0]).empty() || trim(Ends[1]).empty())
        return makeError(Where(), ": an edge line must read '<TAB>nodeX -- nodeY'");
      NamedEdges.emplace_back(trim(Ends[0]), trim(Ends[1]));
      EdgeLines.push_back(LineNo);
      continue;
    }
    std::vector<std::string> Parts = splitOn(Line, " -- ");
    if (Parts.size() < 3)
      return makeError(Where(), ": a layer line must read 'nodeN -- Description -- key=value, ...'");
    PipeDreamLayer L;
    L.id = trim(Parts.front());
    std::string Desc;
    for (size_t I = 1; I + 1 < Parts.size(); ++I) Desc += (I > 1 ? " -- " : "") + Parts[I];
    L.description = trim(Desc);
    bool Seen[4] = {false, false, false, false};
    for (const std::string &KV : splitOn(Parts.back(), ", ")) {
      size_t Eq = KV.find('=');
      if (Eq == std::string::npos) return makeError(Where(), ": expected key=value, got '", trim(KV), "'");
      std::string Key = trim(KV.substr(0, Eq));
      static const char *Keys[4] = {"forward_compute_time", "backward_compute_time", "activation_size",
                                    "parameter_size"};
      double *Fields[4] = {&L.forwardTime, &L.backwardTime, &L.activationBytes, &L.parameterBytes};
      int K = 0;
      while (K < 4 && Key != Keys[K]) ++K;
      if (K == 4) continue; // unknown keys are PipeDream's business, not ours
      if (!parseValue(KV.substr(Eq + 1), *Fields[K]))
        return makeError(Where(), ": ", Key,
                         " must be a finite non-negative number (or a [a; b] list), got '",
                         trim(KV.substr(Eq + 1)), "'");
      Seen[K] = true;
    }
    for (int K = 0; K < 4; ++K)
      if (!Seen[K])
        return makeError(Where(), ": layer '", L.id, "' lacks ",
                         K == 0   ? "forward_compute_time"
                         : K == 1 ? "backward_compute_time"
                         : K == 2 ? "activation_size"
                                  : "parameter_size");
    if (!ById.emplace(L.id, static_cast<int>(Prof.layers.size())).second)
      return makeError(Where(), ": layer '", L.id, "' is defined twice");
    if (Prof.layers.size() >= kMaxLayers) return makeError(Source, ": more than ", kMaxLayers, " layers");
    Prof.layers.push_back(std::move(L));
  }
  if (Prof.layers.empty()) return makeError(Source, ": no layers (not a PipeDream profile?)");
  for (size_t I = 0; I < NamedEdges.size(); ++I) {
    auto A = ById.find(NamedEdges[I].first), B = ById.find(NamedEdges[I].second);
    if (A == ById.end() || B == ById.end())
      return makeError(Source, ":", EdgeLines[I], ": edge names an undefined layer '",
                       A == ById.end() ? NamedEdges[I].first : NamedEdges[I].second, "'");
    Prof.edges.emplace_back(A->second, B->second);
  }
  if (Prof.topologicalOrder().size() != Prof.layers.size())
    return makeError(Source, ": the layer graph has a cycle");
  return Prof;
}

std::vector<int> PipeDreamProfile::topologicalOrder() const {
  size_t N = layers.size();
  std::vector<std::vector<int>> Succ(N);
  std::vector<int> Indeg(N, 0);
  for (auto [A, B] : edges) {
    Succ[A].push_back(B);
    ++Indeg[B];
  }
  using Key = std::pair<long, int>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> Ready;
  for (size_t I = 0; I < N; ++I)
    if (Indeg[I] == 0) Ready.push({numericId(layers[I].id, long(I)), int(I)});
  std::vector<int> Order;
  while (!Ready.empty()) {
    int U = Ready.top().second;
    Ready.pop();
    Order.push_back(U);
    for (int V : Succ[U])
      if (--Indeg[V] == 0) Ready.push({numericId(layers[V].id, V), V});
  }
  return Order; // shorter than N on a cycle
}

namespace {

/// The profile's order without the Input layers (and, if asked, Size
/// layers), and a_0 = the Input layers' activation.
struct Ordered {
  std::vector<int> Layers;
  double InputBytes = 0;
};

Expected<Ordered> orderWithoutInput(const PipeDreamProfile &P, bool DropSize) {
  Ordered O;
  for (int I : P.topologicalOrder()) {
    const PipeDreamLayer &L = P.layers[I];
    if (L.isInput()) {
      O.InputBytes += L.activationBytes;
      continue;
    }
    if (DropSize && L.kind() == "Size") continue;
    O.Layers.push_back(I);
  }
  if (O.Layers.empty()) return makeError(P.sourceName, ": no layer besides Input");
  return O;
}

Chain newChain(const PipeDreamProfile &P, double InputBytes) {
  Chain C;
  C.sourceName = P.sourceName;
  size_t Slash = P.sourceName.find_last_of('/');
  C.name = Slash == std::string::npos ? P.sourceName : P.sourceName.substr(Slash + 1);
  C.inputBytes = InputBytes;
  return C;
}

} // namespace

Expected<Chain> onnxp::chainFromSeparators(const PipeDreamProfile &P) {
  Expected<Ordered> O = orderWithoutInput(P, /*DropSize=*/false);
  if (!O) return O.takeError();
  std::vector<int> Pos(P.layers.size(), -1);
  for (size_t I = 0; I < O->Layers.size(); ++I) Pos[O->Layers[I]] = static_cast<int>(I);
  // Jumped[i] > 0 when some edge u -> w has Pos[u] < i < Pos[w]
  // (a difference array over positions).
  std::vector<int> Diff(O->Layers.size() + 1, 0);
  for (auto [A, B] : P.edges) {
    if (Pos[A] < 0 || Pos[B] < 0) continue; // edges from Input carry a_0
    if (Pos[B] - Pos[A] > 1) {
      ++Diff[Pos[A] + 1];
      --Diff[Pos[B]];
    }
  }
  Chain C = newChain(P, O->InputBytes);
  ChainBlock Cur;
  int Jumped = 0;
  for (size_t I = 0; I < O->Layers.size(); ++I) {
    Jumped += Diff[I];
    const PipeDreamLayer &L = P.layers[O->Layers[I]];
    Cur.forwardTime += L.forwardTime;
    Cur.backwardTime += L.backwardTime;
    Cur.weightBytes += L.parameterBytes;
    Cur.sources.push_back(L.id);
    if (Jumped > 0) continue;
    Cur.name = L.id; // a block is named after its separator
    Cur.outputBytes = L.activationBytes;
    Cur.storedBytes = L.activationBytes;
    C.blocks.push_back(std::move(Cur));
    Cur = ChainBlock();
  }
  // The last layer in a topological order is always a separator.
  ONNXP_RETURN_IF_ERROR(C.validate());
  return C;
}

Expected<Chain> onnxp::chainFromLayers(const PipeDreamProfile &P) {
  Expected<Ordered> O = orderWithoutInput(P, /*DropSize=*/true);
  if (!O) return O.takeError();
  Chain C = newChain(P, O->InputBytes);
  for (int I : O->Layers) {
    const PipeDreamLayer &L = P.layers[I];
    ChainBlock B;
    B.name = L.id;
    B.forwardTime = L.forwardTime;
    B.backwardTime = L.backwardTime;
    B.outputBytes = L.activationBytes;
    B.storedBytes = L.activationBytes;
    B.weightBytes = L.parameterBytes;
    B.sources.push_back(L.id);
    C.blocks.push_back(std::move(B));
  }
  ONNXP_RETURN_IF_ERROR(C.validate());
  return C;
}
