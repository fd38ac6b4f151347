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

#include "onnx-partition/IR/CostGraph.h"

#include <algorithm>
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

/// Lists nest at most this deep (PipeDream writes one level).
constexpr int kMaxListDepth = 32;

/// A finite non-negative number, or a list "[a; b; c]" of them (summed),
/// parsed in one left-to-right pass with an explicit depth: a 100,000-deep
/// "[[[...1...]]]" is one error, not O(depth^2) copies or a stack overflow
/// (issue 25). Returns "" or what is wrong.
std::string parseValue(const std::string &Text, double &Out) {
  const std::string T = trim(Text);
  double Sum = 0;
  int Depth = 0;
  size_t I = 0;
  auto SkipSpace = [&] {
    while (I < T.size() && (T[I] == ' ' || T[I] == '\t')) ++I;
  };
  while (true) {
    // Expecting a value: '[' opens a list, anything else is a number.
    SkipSpace();
    if (I < T.size() && T[I] == '[') {
      if (++Depth > kMaxListDepth)
        return "lists nest deeper than " + std::to_string(kMaxListDepth) + " levels";
      ++I;
      continue;
    }
    size_t End = T.find_first_of("[];", I);
    std::string Num = trim(T.substr(I, End == std::string::npos ? std::string::npos : End - I));
    if (Num.empty()) return "expected a number";
    char *NumEnd = nullptr;
    double V = std::strtod(Num.c_str(), &NumEnd);
    if (NumEnd != Num.c_str() + Num.size() || !std::isfinite(V) || V < 0)
      return "not a finite non-negative number";
    Sum += V;
    I = End == std::string::npos ? T.size() : End;
    // After a value: ']' closes lists, ';' separates list items, the end ends.
    while (I < T.size() && T[I] == ']') {
      if (--Depth < 0) return "unbalanced ']'";
      ++I;
      SkipSpace();
    }
    if (I == T.size()) break;
    if (T[I] != ';' || Depth == 0) return "unexpected '" + std::string(1, T[I]) + "'";
    ++I;
  }
  if (Depth != 0) return "unbalanced '['";
  Out = Sum;
  return "";
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

namespace {
/// '#' starts a comment line (PipeDream writes none; people annotate copies).
bool isCommentOrBlank(const std::string &Line) {
  std::string T = trim(Line);
  return T.empty() || T[0] == '#';
}
} // namespace

bool onnxp::looksLikePipeDreamProfile(const std::string &Text) {
  // The first line that is not blank or a comment, among the first 64 KB.
  size_t Pos = 0;
  std::string First;
  while (Pos < Text.size() && Pos < 65536) {
    size_t End = Text.find('\n', Pos);
    First = Text.substr(Pos, End == std::string::npos ? std::string::npos : End - Pos);
    if (!isCommentOrBlank(First)) break;
    First.clear();
    if (End == std::string::npos) break;
    Pos = End + 1;
  }
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
    if (isCommentOrBlank(Line)) continue;
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
      std::string Value = trim(KV.substr(Eq + 1));
      if (std::string Why = parseValue(Value, *Fields[K]); !Why.empty())
        return makeError(Where(), ": ", Key,
                         " must be a finite non-negative number (or a [a; b] list), got '",
                         Value.size() > 40 ? Value.substr(0, 40) + "..." : Value, "': ", Why);
      // The chain's limits, checked here to name the line (issue 25).
      const double Max = K < 2 ? kMaxChainTimeMs : kMaxChainBytes;
      if (*Fields[K] > Max)
        return makeError(Where(), ": ", Key, " ", formatNumber(*Fields[K]), " is beyond the limit ",
                         formatNumber(Max), K < 2 ? " ms" : " bytes");
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

namespace {
/// One block for one profile layer (rotor's convention: what it outputs is
/// what it stores).
ChainBlock layerBlock(const PipeDreamLayer &L) {
  ChainBlock B;
  B.name = L.id;
  B.forwardTime = L.forwardTime;
  B.backwardTime = L.backwardTime;
  B.outputBytes = L.activationBytes;
  B.storedBytes = L.activationBytes;
  B.weightBytes = L.parameterBytes;
  B.sources.push_back(L.id);
  return B;
}
} // namespace

Expected<Chain> onnxp::chainFromLayers(const PipeDreamProfile &P) {
  Expected<Ordered> O = orderWithoutInput(P, /*DropSize=*/true);
  if (!O) return O.takeError();
  Chain C = newChain(P, O->InputBytes);
  for (int I : O->Layers) { C.blocks.push_back(layerBlock(P.layers[I])); }
  ONNXP_RETURN_IF_ERROR(C.validate());
  return C;
}

Expected<Chain> onnxp::chainFromGraph(const PipeDreamProfile &P) {
  Expected<Ordered> O = orderWithoutInput(P, /*DropSize=*/false);
  if (!O) return O.takeError();
  std::vector<int> Pos(P.layers.size(), -1);
  for (size_t I = 0; I < O->Layers.size(); ++I) Pos[O->Layers[I]] = static_cast<int>(I);
  Chain C = newChain(P, O->InputBytes);
  for (int I : O->Layers) { C.blocks.push_back(layerBlock(P.layers[I])); }
  std::vector<std::pair<int, int>> Edges;
  for (auto [A, B] : P.edges)
    if (Pos[A] >= 0 && Pos[B] >= 0) Edges.emplace_back(Pos[A], Pos[B]); // edges from Input carry a_0
  std::sort(Edges.begin(), Edges.end());
  Edges.erase(std::unique(Edges.begin(), Edges.end()), Edges.end());
  C.edges = std::move(Edges);
  ONNXP_RETURN_IF_ERROR(C.validate());
  return C;
}
