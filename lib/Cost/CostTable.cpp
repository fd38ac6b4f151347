//===- Cost/CostTable.cpp - User-supplied per-node / per-op costs -------===//
//
// Both formats fill the same CostEntry fields through one setter, so they
// accept and reject the same values: a time or byte count must be a finite
// number >= 0. Duplicate keys are an error rather than "last one wins",
// because a table with two rows for one node is almost always a mistake.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/CostTable.h"

#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <vector>

using namespace onnxp;

namespace {
const char *const Fields[] = {"forward_ms", "backward_ms", "bytes", "cpu_forward_ms", "cpu_backward_ms"};

bool isField(const std::string &F) {
  for (const char *K : Fields)
    if (F == K) return true;
  return false;
}

std::optional<double> &slot(CostEntry &E, const std::string &Field) {
  if (Field == "forward_ms") return E.forwardMs;
  if (Field == "backward_ms") return E.backwardMs;
  if (Field == "bytes") return E.bytes;
  if (Field == "cpu_forward_ms") return E.cpuForwardMs;
  return E.cpuBackwardMs;
}

Error setValue(CostEntry &E, const std::string &Field, double V, const std::string &Where) {
  if (!std::isfinite(V) || V < 0) return makeError(Where, ": '", Field, "' must be a finite number >= 0");
  slot(E, Field) = V;
  return Error::success();
}

std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r");
  if (B == std::string::npos) return "";
  size_t E = S.find_last_not_of(" \t\r");
  return S.substr(B, E - B + 1);
}

/// Splits one CSV line on commas; a cell may be double-quoted (node names
/// can hold commas) with "" for a quote.
std::vector<std::string> splitCsv(const std::string &Line) {
  std::vector<std::string> Cells;
  std::string Cur;
  bool Quoted = false;
  for (size_t I = 0; I < Line.size(); ++I) {
    char C = Line[I];
    if (Quoted) {
      if (C == '"' && I + 1 < Line.size() && Line[I + 1] == '"') {
        Cur += '"';
        ++I;
      } else if (C == '"') Quoted = false;
      else Cur += C;
    } else if (C == '"') {
      Quoted = true;
    } else if (C == ',') {
      Cells.push_back(trim(Cur));
      Cur.clear();
    } else {
      Cur += C;
    }
  }
  Cells.push_back(trim(Cur));
  return Cells;
}

Error addEntry(CostTable &T, const std::string &Kind, const std::string &Key, CostEntry E,
               const std::string &Where) {
  if (Key.empty()) return makeError(Where, ": empty key");
  std::map<std::string, CostEntry> &M = Kind == "op" ? T.byOp : T.byNode;
  if (!M.emplace(Key, E).second) return makeError(Where, ": duplicate ", Kind, " '", Key, "'");
  return Error::success();
}

Expected<CostTable> parseCsv(const std::string &Text, const std::string &Path) {
  CostTable T;
  T.path = Path;
  std::istringstream In(Text);
  std::string Line;
  std::vector<std::string> Header;
  int KindCol = -1, KeyCol = -1;
  for (int LineNo = 1; std::getline(In, Line); ++LineNo) {
    std::string Where = Path + ":" + std::to_string(LineNo);
    std::string Trimmed = trim(Line);
    if (Trimmed.empty() || Trimmed[0] == '#') continue;
    std::vector<std::string> Cells = splitCsv(Trimmed);
    if (Header.empty()) {
      Header = Cells;
      for (size_t C = 0; C < Header.size(); ++C) {
        if (Header[C] == "kind") KindCol = static_cast<int>(C);
        else if (Header[C] == "key") KeyCol = static_cast<int>(C);
        else if (!isField(Header[C]))
          return makeError(Where, ": unknown column '", Header[C],
                           "' (expected kind, key, forward_ms, backward_ms, bytes, cpu_forward_ms, "
                           "cpu_backward_ms)");
      }
      if (KeyCol < 0) return makeError(Where, ": the header has no 'key' column");
      continue;
    }
    if (Cells.size() != Header.size())
      return makeError(Where, ": ", Cells.size(), " cells, the header has ", Header.size());
    std::string Kind = KindCol >= 0 ? Cells[KindCol] : "node";
    if (Kind != "node" && Kind != "op") return makeError(Where, ": kind '", Kind, "' must be 'node' or 'op'");
    CostEntry E;
    for (size_t C = 0; C < Cells.size(); ++C) {
      if (static_cast<int>(C) == KindCol || static_cast<int>(C) == KeyCol || Cells[C].empty()) continue;
      size_t Pos = 0;
      double V = NAN;
      try {
        V = std::stod(Cells[C], &Pos);
      } catch (...) { Pos = 0; }
      if (Pos != Cells[C].size())
        return makeError(Where, ": '", Header[C], "' value '", Cells[C], "' is not a number");
      ONNXP_RETURN_IF_ERROR(setValue(E, Header[C], V, Where));
    }
    ONNXP_RETURN_IF_ERROR(addEntry(T, Kind, Cells[KeyCol], E, Where));
  }
  if (Header.empty()) return makeError(Path, ": empty cost table (expected a CSV header line)");
  return T;
}

Expected<CostTable> parseJson(const std::string &Text, const std::string &Path) {
  nlohmann::json J;
  try {
    J = nlohmann::json::parse(Text);
  } catch (const std::exception &Ex) { return makeError(Path, ": not valid JSON: ", Ex.what()); }
  if (!J.is_object())
    return makeError(Path, ": a JSON cost table is an object with \"nodes\" and/or \"ops\"");
  CostTable T;
  T.path = Path;
  for (auto &[Section, Entries] : J.items()) {
    if (Section != "nodes" && Section != "ops")
      return makeError(Path, ": unknown section '", Section, "' (expected \"nodes\" or \"ops\")");
    if (!Entries.is_object()) return makeError(Path, ": \"", Section, "\" must be an object");
    std::string Kind = Section == "ops" ? "op" : "node";
    for (auto &[Key, Obj] : Entries.items()) {
      std::string Where = Path + ": " + Section + "." + Key;
      if (!Obj.is_object()) return makeError(Where, ": expected an object of fields");
      CostEntry E;
      for (auto &[Field, V] : Obj.items()) {
        if (!isField(Field)) return makeError(Where, ": unknown field '", Field, "'");
        if (V.is_null()) continue;
        if (!V.is_number()) return makeError(Where, ": '", Field, "' is not a number");
        ONNXP_RETURN_IF_ERROR(setValue(E, Field, V.get<double>(), Where));
      }
      ONNXP_RETURN_IF_ERROR(addEntry(T, Kind, Key, E, Where));
    }
  }
  return T;
}
} // namespace

Expected<CostTable> onnxp::parseCostTable(const std::string &Text, const std::string &Path) {
  size_t First = Text.find_first_not_of(" \t\r\n");
  if (First != std::string::npos && Text[First] == '{') return parseJson(Text, Path);
  return parseCsv(Text, Path);
}

Expected<CostTable> onnxp::loadCostTable(const std::string &Path) {
  Expected<std::string> Text = readFile(Path, kMaxJsonInputBytes, "a cost table");
  if (!Text) return Text.takeError().withContext("--cost-table");
  return parseCostTable(*Text, Path);
}
