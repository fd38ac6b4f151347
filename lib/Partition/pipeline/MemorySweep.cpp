//===- Partition/pipeline/MemorySweep.cpp - Period against memory limit ---===//
//
// The sweep of PipelineSweep.h: pipeline-ilp and the baseline at each limit.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PatternInFlight.h"
#include "onnx-partition/Partition/PipelineSweep.h"
#include "onnx-partition/Support/Escape.h"

#include "onnx-partition/Support/Deadline.h"

#include <algorithm>
#include <cstdio>
#include <set>

using namespace onnxp;

std::vector<double> onnxp::memoryLimits(double Lo, double Hi, int Count) {
  std::vector<double> R;
  for (int I = 0; I < Count; ++I) R.push_back(std::floor(Count == 1 ? Hi : Lo + (Hi - Lo) * I / (Count - 1)));
  return R;
}

Expected<std::vector<MemorySweepPoint>>
onnxp::memorySweep(const PipelineTasks &Tasks, const std::vector<double> &Limits, const PipelineIlpOptions &O,
                   const std::function<void(const MemorySweepPoint &)> &Progress) {
  std::vector<MemorySweepPoint> Points;
  for (size_t I = 0; I < Limits.size(); ++I) {
    const double M = Limits[I];
    MemorySweepPoint Pt;
    Pt.memoryBytes = M;
    PipelineIlpOptions IO = O;
    IO.memoryBytes = M;
    // Issue 20: the sweep's budget is shared evenly by the points left;
    // issue 39, item 2: the baseline's DPs (O(P L^2)) stop at that share too.
    IO.deadline = O.deadline.share(1.0 / double(Limits.size() - I));
    Expected<PipelinePlan> Base =
        bestContiguousWithin(Tasks, O.numGpus, M, [&IO] { return IO.deadline.expired(); });
    if (Base) {
      Pt.baselinePeriod = Base->period();
      Pt.baselinePeakMemory = Base->peakMemory();
      Pt.baselineStages = Base->pattern.usedGpus();
      Pt.baselineInFlight = patternInFlight(Tasks, Base->pattern);
    }
    Expected<PipelinePlan> Ilp = planPipelineIlp(Tasks, IO);
    if (Ilp) {
      Pt.ilpPeriod = Ilp->period();
      Pt.ilpPeakMemory = Ilp->peakMemory();
      Pt.ilpInFlight = patternInFlight(Tasks, Ilp->pattern);
      Pt.ilpBound = Ilp->lowerBound;
      Pt.ilpGap = Ilp->stats.count("solver_gap") ? Ilp->stats.at("solver_gap") : NAN;
      Pt.ilpProven = Ilp->stats.count("proven_optimal") && Ilp->stats.at("proven_optimal") == 1;
      Pt.ilpSeconds = Ilp->stats.at("solver_seconds");
      auto Stat = [&](const char *Key) { return Ilp->stats.count(Key) ? Ilp->stats.at(Key) : NAN; };
      Pt.warmStartPeriod = Stat("warm_start_period_ms");
      Pt.ilpVariables = Stat("ilp_variables");
      Pt.ilpRows = Stat("ilp_rows");
    } else {
      Error E = Ilp.takeError();
      if (E.kind() == Error::Kind::Internal) return E;
      Pt.ilpInfeasible = E.cause() == Error::Cause::NoFeasiblePattern;
      Pt.ilpProven = Pt.ilpInfeasible;
    }
    if (Progress) Progress(Pt);
    Points.push_back(Pt);
  }
  return Points;
}

namespace {
std::string fmt(double V, int Digits = 1) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.*f", Digits, V);
  return Buf;
}

/// Round step (1, 2 or 5 times a power of ten) giving about N ticks.
double niceStep(double Range, int N) {
  double Raw = Range / N, Pow = std::pow(10, std::floor(std::log10(Raw)));
  for (double M : {1.0, 2.0, 5.0, 10.0})
    if (Raw <= M * Pow) return M * Pow;
  return 10 * Pow;
}
} // namespace

std::string onnxp::memorySweepSvg(const std::vector<MemorySweepPoint> &Points, const std::string &Title) {
  const double W = 720, H = 480, Left = 80, Right = 170, Top = 50, Bottom = 60;
  double XMin = INFINITY, XMax = -INFINITY, YMin = INFINITY, YMax = -INFINITY;
  for (const MemorySweepPoint &P : Points) {
    double X = P.memoryBytes / 1e9;
    for (double Y : {P.ilpPeriod, P.baselinePeriod})
      if (std::isfinite(Y)) {
        XMin = std::min(XMin, X), XMax = std::max(XMax, X);
        YMin = std::min(YMin, Y), YMax = std::max(YMax, Y);
      }
  }
  if (!std::isfinite(XMin)) XMin = 0, XMax = 1, YMin = 0, YMax = 1;
  if (XMax - XMin < 1e-9) XMin -= 0.5, XMax += 0.5;
  if (YMax - YMin < 1e-9) YMin -= 0.5, YMax += 0.5;
  double YPad = 0.08 * (YMax - YMin), XPad = 0.04 * (XMax - XMin);
  YMin = std::max(0.0, YMin - YPad), YMax += YPad, XMin -= XPad, XMax += XPad;
  auto PX = [&](double X) { return Left + (X - XMin) / (XMax - XMin) * (W - Left - Right); };
  auto PY = [&](double Y) { return H - Bottom - (Y - YMin) / (YMax - YMin) * (H - Top - Bottom); };

  std::string S = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt(W, 0) + "\" height=\"" +
                  fmt(H, 0) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  S += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  S += "<text x=\"" + fmt(W / 2 - 40, 0) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
       xmlEscape(Title) + "</text>\n";
  // Axes, ticks and grid.
  S += "<line x1=\"" + fmt(Left) + "\" y1=\"" + fmt(H - Bottom) + "\" x2=\"" + fmt(W - Right) + "\" y2=\"" +
       fmt(H - Bottom) + "\" stroke=\"black\"/>\n";
  S += "<line x1=\"" + fmt(Left) + "\" y1=\"" + fmt(Top) + "\" x2=\"" + fmt(Left) + "\" y2=\"" +
       fmt(H - Bottom) + "\" stroke=\"black\"/>\n";
  double XS = niceStep(XMax - XMin, 8), YS = niceStep(YMax - YMin, 8);
  int XDig = XS < 1 ? (XS < 0.1 ? 2 : 1) : 0, YDig = YS < 1 ? (YS < 0.1 ? 2 : 1) : 0;
  for (double X = std::ceil(XMin / XS) * XS; X <= XMax; X += XS) {
    S += "<line x1=\"" + fmt(PX(X)) + "\" y1=\"" + fmt(Top) + "\" x2=\"" + fmt(PX(X)) + "\" y2=\"" +
         fmt(H - Bottom) + "\" stroke=\"#ddd\"/>\n";
    S += "<text x=\"" + fmt(PX(X)) + "\" y=\"" + fmt(H - Bottom + 18) + "\" text-anchor=\"middle\">" +
         fmt(X, XDig) + "</text>\n";
  }
  for (double Y = std::ceil(YMin / YS) * YS; Y <= YMax; Y += YS) {
    S += "<line x1=\"" + fmt(Left) + "\" y1=\"" + fmt(PY(Y)) + "\" x2=\"" + fmt(W - Right) + "\" y2=\"" +
         fmt(PY(Y)) + "\" stroke=\"#ddd\"/>\n";
    S += "<text x=\"" + fmt(Left - 6) + "\" y=\"" + fmt(PY(Y) + 4) + "\" text-anchor=\"end\">" +
         fmt(Y, YDig) + "</text>\n";
  }
  S += "<text x=\"" + fmt((Left + W - Right) / 2) + "\" y=\"" + fmt(H - 18) +
       "\" text-anchor=\"middle\">memory limit per GPU (GB)</text>\n";
  S += "<text transform=\"translate(22," + fmt((Top + H - Bottom) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">period (ms)</text>\n";
  // Series: steps would suggest values between limits; points and a thin line.
  auto Series = [&](bool Ilp, const char *Color, const char *Name, double LegendY) {
    std::string Path;
    for (const MemorySweepPoint &P : Points) {
      double Y = Ilp ? P.ilpPeriod : P.baselinePeriod;
      if (!std::isfinite(Y)) continue;
      double X = PX(P.memoryBytes / 1e9), YY = PY(Y);
      Path += (Path.empty() ? "M" : " L") + fmt(X) + " " + fmt(YY);
      // The baseline as rings, the ILP as dots: equal periods stay visible.
      std::string Style =
          Ilp ? std::string("r=\"4\" fill=\"") + Color + "\"" + (P.ilpProven ? "" : " fill-opacity=\"0.5\"")
              : std::string("r=\"7\" fill=\"none\" stroke-width=\"2\" stroke=\"") + Color + "\"";
      S += std::string("<circle cx=\"") + fmt(X) + "\" cy=\"" + fmt(YY) + "\" " + Style + "><title>" + Name +
           ": " + fmt(Y, 3) + " ms at " + fmt(P.memoryBytes / 1e9, 3) + " GB</title></circle>\n";
    }
    if (!Path.empty())
      S += std::string("<path d=\"") + Path + "\" fill=\"none\" stroke=\"" + Color +
           "\" stroke-width=\"1\" stroke-opacity=\"0.6\"/>\n";
    S += std::string("<circle cx=\"") + fmt(W - Right + 20) + "\" cy=\"" + fmt(LegendY) + "\" " +
         (Ilp ? std::string("r=\"4\" fill=\"") + Color + "\""
              : std::string("r=\"6\" fill=\"none\" stroke-width=\"2\" stroke=\"") + Color + "\"") +
         "/>\n<text x=\"" + fmt(W - Right + 30) + "\" y=\"" + fmt(LegendY + 4) + "\">" + Name + "</text>\n";
  };
  Series(false, "#1f5fbf", "PipeDream", Top + 10);
  Series(true, "#d62728", "pipeline-ilp", Top + 30);
  S += "<text x=\"" + fmt(W - Right + 14) + "\" y=\"" + fmt(Top + 54) +
       "\" font-size=\"10\">pale: not proven optimal</text>\n";
  S += "</svg>\n";
  return S;
}
