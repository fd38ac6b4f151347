//===- tools/onnx-partition/ProfileCommand.cpp - onnx-partition profile --===//
//
// `onnx-partition profile MODEL [--platform P] [-o costs.json|costs.csv]`
// prices the model exactly as the partitioning pipeline would (same passes,
// same flags: --training, --cost-table, --profile, --optimizer) and shows
// the numbers partitioners are fed: per node FLOPs, bytes, time on each
// device kind, memory breakdown and which source priced it, plus a summary
// (forward / backward time, memory totals, the ten most expensive ops, ops
// the fallback rule priced). Partitioners are only as good as these numbers;
// this is how a user checks them.
//
// --emit-onnx FILE writes the model as binary ONNX with every node named as
// in the cost table and the --dim values bound in the graph inputs: the
// form test/ort/profile.js runs in ONNX Runtime, whose profile then matches
// node for node (ONNX text cannot name nodes, and ORT names kernel events
// after nodes).
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"
#include "OrtScripts.h"

#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/RankCorrelation.h"
#include "onnx-partition/Cost/Roofline.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputTransaction.h"
#include "onnx-partition/Support/SummaryText.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace onnxp;
using namespace onnxp::tool;

namespace {
struct Row {
  int id;
  std::string rule;
};

bool endsWith(const std::string &S, const std::string &Suffix) {
  return S.size() >= Suffix.size() && S.compare(S.size() - Suffix.size(), Suffix.size(), Suffix) == 0;
}

std::string csvCell(const std::string &S) {
  if (S.find_first_of(",\"\n") == std::string::npos) return S;
  std::string Q = "\"";
  for (char C : S) Q += C == '"' ? std::string("\"\"") : std::string(1, C);
  return Q + "\"";
}

/// Per-node rows and summary as JSON (the -o .json format; the CSV holds the
/// same node rows).
nlohmann::ordered_json buildJson(const PassContext &Ctx, const std::vector<std::string> &Rules) {
  using json = nlohmann::ordered_json;
  const CostGraph &G = Ctx.graph;
  json J;
  J["model"] = G.sourceName;
  J["platform"] = {{"name", Ctx.platform.name},
                   {"accelerator", Ctx.platform.accelerator.name},
                   {"cpu", Ctx.platform.cpu.name}};
  J["time_unit"] = G.timeUnit;
  J["optimizer"] = optimizerName(Ctx.options.optimizer);
  J["nodes"] = json::array();
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    J["nodes"].push_back({{"node", N.name},
                          {"op", N.op},
                          {"role", roleName(N.role)},
                          {"partner", N.partner >= 0 ? json(G.node(N.partner).name) : json(nullptr)},
                          {"flops", N.flops},
                          {"bytes", N.bytesAccessed},
                          {"acc_ms", N.accTime},
                          {"cpu_ms", N.cpuTime},
                          {"param_bytes", N.paramBytes},
                          {"grad_bytes", N.gradBytes},
                          {"optimizer_bytes", N.optimizerBytes},
                          {"saved_bytes", N.savedBytes},
                          {"workspace_bytes", N.workspaceBytes},
                          {"mem_bytes", N.memBytes},
                          {"source", N.costSource},
                          {"rule", Rules[V]}});
  }
  return J;
}

std::string buildCsv(const PassContext &Ctx, const std::vector<std::string> &Rules) {
  const CostGraph &G = Ctx.graph;
  std::ostringstream OS;
  OS << "node,op,role,flops,bytes,acc_ms,cpu_ms,param_bytes,grad_bytes,optimizer_bytes,saved_bytes,"
        "workspace_bytes,mem_bytes,source,rule\n";
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    OS << csvCell(N.name) << "," << csvCell(N.op) << "," << roleName(N.role) << "," << formatNumber(N.flops)
       << "," << formatNumber(N.bytesAccessed) << "," << formatNumber(N.accTime) << ","
       << formatNumber(N.cpuTime) << "," << formatNumber(N.paramBytes) << "," << formatNumber(N.gradBytes)
       << "," << formatNumber(N.optimizerBytes) << "," << formatNumber(N.savedBytes) << ","
       << formatNumber(N.workspaceBytes) << "," << formatNumber(N.memBytes) << "," << csvCell(N.costSource)
       << "," << csvCell(Rules[V]) << "\n";
  }
  return OS.str();
}

void printSummary(std::ostream &OS, const PassContext &Ctx, const std::vector<std::string> &Rules) {
  const CostGraph &G = Ctx.graph;
  const std::string &U = G.timeUnit;
  OS << "model: " << G.sourceName << "\n";
  OS << "platform: " << Ctx.platform.name << " (accelerator " << Ctx.platform.accelerator.name << ", cpu "
     << Ctx.platform.cpu.name << ")\n";
  std::map<std::string, size_t> Sources;
  for (const CostNode &N : G.nodes()) ++Sources[N.costSource.empty() ? "-" : N.costSource];
  OS << "sources:";
  for (auto &[S, C] : Sources) OS << " " << S << "=" << C;
  OS << "\n";

  double Acc[4] = {0, 0, 0, 0}, Cpu[4] = {0, 0, 0, 0}, Flops[4] = {0, 0, 0, 0};
  for (const CostNode &N : G.nodes()) {
    int R = static_cast<int>(N.role);
    Acc[R] += N.accTime;
    Cpu[R] += N.cpuTime;
    Flops[R] += N.flops;
  }
  auto Line = [&](const char *Label, std::initializer_list<Role> Roles) {
    double A = 0, C = 0, F = 0;
    for (Role R : Roles) {
      A += Acc[static_cast<int>(R)];
      C += Cpu[static_cast<int>(R)];
      F += Flops[static_cast<int>(R)];
    }
    OS << Label << ": acc " << formatNumber(A) << " " << U << ", cpu " << formatNumber(C) << " " << U << ", "
       << formatNumber(F) << " FLOPs\n";
  };
  Line("forward (incl. loss)", {Role::Forward, Role::Loss});
  Line("backward", {Role::Backward});
  Line("optimizer", {Role::Optimizer});
  Line("total", {Role::Forward, Role::Loss, Role::Backward, Role::Optimizer});

  MemorySummary M = summarizeMemory(G);
  OS << "memory (bytes): parameters " << formatNumber(M.parameters) << ", gradients "
     << formatNumber(M.gradients) << ", optimizer state " << formatNumber(M.optimizerState)
     << (Ctx.model ? " (" + std::string(optimizerName(Ctx.options.optimizer)) + ")" : std::string())
     << ", saved activations " << formatNumber(M.savedActivations) << ", peak workspace "
     << formatNumber(M.peakWorkspace) << ", charged " << formatNumber(M.charged) << "\n";

  std::vector<int> Order(G.numNodes());
  for (size_t V = 0; V < G.numNodes(); ++V) Order[V] = static_cast<int>(V);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](int A, int B) { return G.node(A).accTime > G.node(B).accTime; });
  OS << "top " << std::min<size_t>(10, Order.size()) << " nodes by accelerator time:\n";
  for (size_t I = 0; I < Order.size() && I < 10; ++I) {
    const CostNode &N = G.node(Order[I]);
    OS << "  " << std::setw(2) << I + 1 << ". " << N.name << " (" << N.op << ", " << roleName(N.role)
       << ") acc " << formatNumber(N.accTime) << " " << U << ", cpu " << formatNumber(N.cpuTime) << " " << U
       << ", " << formatNumber(N.flops) << " FLOPs, " << formatNumber(N.bytesAccessed) << " bytes, "
       << N.costSource << "\n";
  }
  std::set<std::string> FallbackOps;
  size_t Fallback = 0;
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (Rules[V] == "fallback") {
      ++Fallback;
      FallbackOps.insert(G.node(V).op);
    }
  if (Fallback) {
    OS << "fallback rule (no cost rule for the op) priced " << Fallback << " nodes:";
    for (const std::string &Op : FallbackOps) OS << " " << Op;
    OS << "\n";
  }
  for (const std::string &N : Ctx.notes) OS << noteLine(N).substr(2); // never "note: warning:"
}

/// With --profile: how well the analytical model (for the device kind the
/// profile describes) ranks the measured nodes: Spearman's rho, the median
/// measured/analytical ratio (the model's scale error) and the nodes whose
/// ratio strays furthest from that median (docs/cost-model.md).
void printAgreement(std::ostream &OS, const PassContext &Ctx) {
  const CostGraph &G = Ctx.graph;
  bool OnCpu = Ctx.options.profileDevice == MeasuredDevice::Cpu;
  const DeviceSpec &D = OnCpu ? Ctx.platform.cpu : Ctx.platform.accelerator;
  std::vector<int> Ids;
  std::vector<double> Model, Measured;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    if (N.costSource != "profile") continue;
    Ids.push_back(static_cast<int>(V));
    Model.push_back(nodeRooflineMs(G, static_cast<int>(V), *Ctx.model, D));
    Measured.push_back(OnCpu ? N.cpuTime : N.accTime);
  }
  if (Ids.size() < 2) return;
  std::vector<double> LogRatio;
  for (size_t I = 0; I < Ids.size(); ++I)
    LogRatio.push_back(std::log(std::max(Measured[I], 1e-9) / std::max(Model[I], 1e-9)));
  std::vector<double> Sorted = LogRatio;
  std::sort(Sorted.begin(), Sorted.end());
  double MedianLog = Sorted.size() % 2 ? Sorted[Sorted.size() / 2]
                                       : (Sorted[Sorted.size() / 2 - 1] + Sorted[Sorted.size() / 2]) / 2;
  OS << "analytical (" << D.name << ") vs measured: " << Ids.size() << " nodes, Spearman rho "
     << formatNumber(spearmanRho(Model, Measured)) << ", median measured/analytical "
     << formatNumber(std::exp(MedianLog)) << "\n";
  std::vector<size_t> Order(Ids.size());
  for (size_t I = 0; I < Order.size(); ++I) Order[I] = I;
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return std::fabs(LogRatio[A] - MedianLog) > std::fabs(LogRatio[B] - MedianLog);
  });
  OS << "worst outliers (ratio relative to the median):\n";
  for (size_t I = 0; I < Order.size() && I < 5; ++I) {
    size_t K = Order[I];
    const CostNode &N = G.node(Ids[K]);
    OS << "  " << N.name << " (" << N.op << ") measured " << formatNumber(Measured[K]) << " ms, analytical "
       << formatNumber(Model[K]) << " ms, x" << formatNumber(std::exp(LogRatio[K] - MedianLog)) << "\n";
  }
}
} // namespace

namespace onnxp::tool {

/// The model with unnamed nodes named after their cost-graph node and the
/// bound symbolic dims of graph inputs and outputs made concrete.
Error emitNamedModel(const PassContext &Ctx, const std::string &Path) {
  OnnxModel Copy = *Ctx.model;
  onnx::GraphProto *G = Copy.proto.mutable_graph();
  for (const CostNode &N : Ctx.graph.nodes())
    if (N.onnxNodes.size() == 1 && G->node(N.onnxNodes[0]).name().empty())
      G->mutable_node(N.onnxNodes[0])->set_name(N.name);
  auto Bind = [&](onnx::ValueInfoProto &VI) {
    if (!VI.type().has_tensor_type() || !VI.type().tensor_type().has_shape()) return;
    for (auto &D : *VI.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!D.has_dim_param()) continue;
      auto It = Ctx.model->dimBindings.find(D.dim_param());
      if (It != Ctx.model->dimBindings.end()) D.set_dim_value(It->second);
    }
  };
  for (auto &VI : *G->mutable_input()) Bind(VI);
  for (auto &VI : *G->mutable_output()) Bind(VI);
  G->clear_value_info(); // inferred shapes: ONNX Runtime infers its own
  Expected<std::string> Bytes = serializeModel(Copy);
  if (!Bytes) return Bytes.takeError();
  return writeFileAtomically(Path, *Bytes);
}

int runProfile(int Argc, char **Argv) {
  CLI::App App{"Price every node as the partitioner would and print the per-op cost table"};
  App.name("onnx-partition profile");
  CompileOptions O = toolRequest();
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  App.add_option("-o,--output", O.outputs.output, "Write the per-node cost table here (.json or .csv)")
      ->type_name("costs.json|costs.csv")
      ->group("Output");
  std::string EmitOnnx;
  App.add_option(
         "--emit-onnx", EmitOnnx,
         "Write the model as binary ONNX with named nodes and bound dims (input of test/ort/profile.js)")
      ->type_name("FILE")
      ->group("Output");
  addPipelineOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;

  bool Csv = endsWith(O.outputs.output, ".csv");
  if (!O.outputs.output.empty() && !Csv && !endsWith(O.outputs.output, ".json"))
    return reportError(makeUsageError("-o '", O.outputs.output, "' must end in .json or .csv"));
  if (!O.outputs.output.empty())
    if (Error E = checkWritable(O.outputs.output, "-o")) return reportError(E);
  if (!EmitOnnx.empty())
    if (Error E = checkWritable(EmitOnnx, "--emit-onnx")) return reportError(E);
  // Issue 39 item 4: two outputs at one path would lose one silently
  // (/dev/null, a character device, may take both).
  if (!EmitOnnx.empty() && !O.outputs.output.empty() && samePath(EmitOnnx, O.outputs.output) &&
      !isCharDevice(EmitOnnx))
    return reportError(makeUsageError("--emit-onnx '", EmitOnnx, "' and -o '", O.outputs.output,
                                      "' are the same file; each output needs its own file"));

  Expected<PassContext> Ctx = loadCompileContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (Error E = runCompilePipeline(*Ctx, O, /*WithPartition=*/false)) return reportError(E);
  if (!Ctx->hasGraph || !Ctx->costed)
    return reportError(
        makeUsageError("profile needs a priced cost graph; include estimate-costs in --passes"));

  // The rule that priced each node (analytical model), for the table.
  std::vector<std::string> Rules(Ctx->graph.numNodes(), "");
  // The placeholder model uses no rule, so it gets none.
  if (Ctx->model)
    for (size_t V = 0; V < Ctx->graph.numNodes(); ++V)
      if (Ctx->graph.node(V).costSource != "placeholder")
        Rules[V] = nodeWork(Ctx->graph, static_cast<int>(V), *Ctx->model).rule;

  if (!EmitOnnx.empty()) {
    if (!Ctx->model)
      return reportError(makeUsageError("--emit-onnx needs an ONNX model, not a JSON workload"));
    if (Error E = emitNamedModel(*Ctx, EmitOnnx)) return reportError(E);
  }
  if (!O.outputs.output.empty()) {
    std::string Text = Csv ? buildCsv(*Ctx, Rules) : buildJson(*Ctx, Rules).dump(2) + "\n";
    if (Error E = writeFileAtomically(O.outputs.output, Text)) return reportError(E);
  }
  printSummary(std::cout, *Ctx, Rules);
  if (!O.profile.empty() && Ctx->model) printAgreement(std::cout, *Ctx);
  return 0;
}

} // namespace onnxp::tool
