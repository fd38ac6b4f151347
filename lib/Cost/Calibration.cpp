//===- Cost/Calibration.cpp - Fit a device's roofline to measured kernels --===//
//
// Both fits minimize sum(w * log(predicted / measured)^2) over three log-scaled
// parameters with a grid search refined around the best point: the
// roofline's max() makes the error piecewise smooth, so a grid is safer
// than a gradient method, and three parameters keep it cheap (33^3 points
// per round, four rounds: a final step of 0.2% of a parameter).
//
// A kind whose samples are all compute-bound says nothing about its
// bandwidth (and large kernels say little about the overhead): the error
// is flat in that direction. A tiny penalty on each parameter's distance
// from the device-wide fit picks the device value there instead of an
// arbitrary point of the flat valley; it moves identified parameters by
// far less than the grid step.
//
// The weight w = 1 + measured / mean measured: every kernel counts (ranks,
// small kernels' overheads), and a kernel counts again by its share of the
// time, because a stage's time is a sum that its large kernels make. With
// w = 1 AlexNet's 151 MB weight fill (a ConstantOfShape among fifteen small
// ones) was priced 25% short, and the calibrated stage holding it 36%; the
// whole model 16% short, 5% with the weight (ResNet-50: -6..+1% -> 0..+8%).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/Calibration.h"

#include "onnx-partition/Cost/RankCorrelation.h"
#include "onnx-partition/Cost/Roofline.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

using namespace onnxp;

namespace {
constexpr double kTieBreak = 1e-9;

/// A measured kernel and its weight in the fit.
struct Weighted {
  const CalibrationSample *sample;
  double weight;
};

/// Weighted sum of squared log ratios of the roofline with rates Flops, Bw
/// (FLOP/s, B/s) and overhead OMs over S (the formula of Cost/Roofline.cpp,
/// inlined: the grid evaluates it some 10^5 times per kind).
double logSse(const std::vector<Weighted> &S, double Flops, double Bw, double OMs) {
  double E = 0;
  for (const Weighted &X : S) {
    double T = OMs + std::max(X.sample->work.flops / Flops, X.sample->work.bytes() / Bw) * 1e3;
    double L = std::log(std::max(T, 1e-12) / X.sample->measuredMs);
    E += X.weight * L * L;
  }
  return E;
}

/// Minimizes Err over Dims log10 parameters starting at Log, each within
/// +-2 decades of its start: 33 points a parameter (the last varying
/// fastest), four rounds, each around the last one's best at a quarter of
/// its span.
/// Upper (when given) bounds each parameter: a point beyond it is taken at it.
template <int Dims>
void gridSearch(double (&Log)[Dims], const std::function<double(const double *)> &Err,
                const double *Upper = nullptr) {
  constexpr int Steps = 16, Side = 2 * Steps + 1;
  double Start[Dims], B[Dims], T[Dims];
  std::copy(Log, Log + Dims, Start);
  int Points = 1;
  for (int P = 0; P < Dims; ++P) Points *= Side;
  double Span = 2.0;
  for (int Round = 0; Round < 4; ++Round, Span /= 4) {
    double Best = INFINITY;
    std::copy(Log, Log + Dims, B);
    for (int Idx = 0; Idx < Points; ++Idx) {
      for (int P = Dims - 1, R = Idx; P >= 0; --P, R /= Side)
        T[P] = Upper ? std::min(Upper[P], Log[P] + Span * (R % Side - Steps) / Steps)
                     : Log[P] + Span * (R % Side - Steps) / Steps;
      double E = Err(T);
      for (int P = 0; P < Dims; ++P) E += kTieBreak * (T[P] - Start[P]) * (T[P] - Start[P]);
      if (E < Best) Best = E, std::copy(T, T + Dims, B);
    }
    std::copy(B, B + Dims, Log);
  }
}

/// How far gridSearch can move a parameter from its start, in decades: the
/// sum of its four rounds' spans (10^2.65625 = 453.158x, the factor the
/// PaddleOCR classifier's kinds stopped at before rates were bounded).
constexpr double kGridReach = 2 + 0.5 + 0.125 + 0.03125;

/// Appends to Out each parameter of a finished gridSearch (best point Log,
/// started at Start) left at a limit: at Upper with the error still falling
/// beyond it (the fit wants more than the peak; a parameter the samples do
/// not determine sits there too, but its error is flat), or at the edge
/// of the searched span.
template <int Dims>
void findLimits(const double (&Log)[Dims], const double (&Start)[Dims], const double *Upper,
                const std::function<double(const double *)> &Err, const char *const (&Names)[Dims],
                const std::string &Kind, int Samples, std::vector<CalibrationLimit> *Out) {
  if (!Out) return;
  const double AtBest = Err(Log);
  for (int P = 0; P < Dims; ++P) {
    CalibrationLimit L{Kind, Names[P], Samples, CalibrationLimit::AbovePeak};
    if (Upper && std::isfinite(Upper[P]) && Log[P] >= Upper[P] - 1e-12) {
      double T[Dims];
      std::copy(Log, Log + Dims, T);
      T[P] = Upper[P] + 0.05; // 12% above the peak
      if (Err(T) < AtBest * (1 - 1e-9)) Out->push_back(L);
      continue;
    }
    if (std::fabs(Log[P] - Start[P]) < kGridReach - 1e-9) continue;
    L.reason = Log[P] < Start[P] ? CalibrationLimit::GridEdgeLow : CalibrationLimit::GridEdgeHigh;
    Out->push_back(L);
  }
}

/// The one efficiency E (a fraction of both of D's peaks, D's overhead,
/// at most Upper) that fits S best, within 2 decades of the peaks as the
/// per-kind fits.
double fitOneEfficiency(const std::vector<Weighted> &S, const DeviceSpec &D, double Upper,
                        const std::string &Kind, std::vector<CalibrationLimit> *Limits) {
  double Log[1] = {0};
  const double Start[1] = {0}, Up[1] = {std::log10(Upper)};
  const std::function<double(const double *)> Err = [&](const double *T) {
    return logSse(S, D.peakFlops * std::pow(10, T[0]), D.memBandwidth * std::pow(10, T[0]),
                  D.kernelOverheadMs);
  };
  gridSearch(Log, Err, Up);
  static const char *const Names[1] = {"efficiency"};
  findLimits(Log, Start, Up, Err, Names, Kind, static_cast<int>(S.size()), Limits);
  return std::pow(10, Log[0]);
}

/// Issue 37, item 7: an efficiency is a fraction of the device's peak, at
/// most 1. A kind the per-kind fit found faster than the device-wide fit
/// (both bounded by the platform's peaks) raises the device's peak to its
/// rate, and every kind's efficiencies are rescaled to it: the fitted
/// kinds are priced as fitted; a kind the profile did not hold runs at the
/// raised peaks.
void normalizeToPeaks(DeviceSpec &D) {
  double Flops = D.peakFlops, Bw = D.memBandwidth;
  for (const auto &KE : D.opKinds) {
    Flops = std::max(Flops, D.peakFlops * KE.second.flopsEfficiency);
    Bw = std::max(Bw, D.memBandwidth * KE.second.bandwidthEfficiency);
  }
  for (auto &KE : D.opKinds) {
    KE.second.flopsEfficiency = std::min(1.0, KE.second.flopsEfficiency * D.peakFlops / Flops);
    KE.second.bandwidthEfficiency = std::min(1.0, KE.second.bandwidthEfficiency * D.memBandwidth / Bw);
  }
  D.peakFlops = Flops;
  D.memBandwidth = Bw;
}
} // namespace

std::vector<std::string> onnxp::describeLimits(const std::vector<CalibrationLimit> &Limits) {
  std::string Clamped, Edge;
  for (const CalibrationLimit &L : Limits) {
    std::string Item = (L.kind.empty() ? std::string("the device-wide") : L.kind) + " " + L.parameter + " (" +
                       std::to_string(L.samples) + (L.samples == 1 ? " kernel" : " kernels");
    if (L.reason == CalibrationLimit::AbovePeak) {
      Clamped += (Clamped.empty() ? "" : ", ") + Item + ")";
      continue;
    }
    Edge += (Edge.empty() ? "" : ", ") + Item +
            (L.reason == CalibrationLimit::GridEdgeLow ? ", low)" : ", high)");
  }
  std::vector<std::string> Lines;
  if (!Clamped.empty())
    Lines.push_back(
        "clamped at the platform's peak (the fit wants more; no kernel beats its device's peak): " + Clamped);
  if (!Edge.empty())
    Lines.push_back(
        "at the edge of the searched span (453x from the start; the best value may lie beyond): " + Edge);
  return Lines;
}

FitQuality onnxp::fitQuality(const std::vector<CalibrationSample> &S, const DeviceSpec &D) {
  FitQuality Q;
  if (S.empty()) return Q;
  std::vector<double> Pred, Meas;
  double Ape = 0, SumP = 0, SumM = 0;
  for (const CalibrationSample &X : S) {
    double P = rooflineMs(X.work, D, X.kind);
    SumP += P;
    SumM += X.measuredMs;
    Pred.push_back(P);
    Meas.push_back(X.measuredMs);
    Ape += std::fabs(P - X.measuredMs) / X.measuredMs;
    double L = std::log(std::max(P, 1e-12) / X.measuredMs);
    Q.logSse += L * L;
  }
  Q.rho = S.size() >= 2 ? spearmanRho(Pred, Meas) : 0;
  Q.mape = 100 * Ape / static_cast<double>(S.size());
  Q.totalError = SumM > 0 ? 100 * std::fabs(SumP - SumM) / SumM : 0;
  return Q;
}

DeviceSpec onnxp::calibrateDevice(const std::vector<CalibrationSample> &S, const DeviceSpec &Base,
                                  const CalibrationOptions &O, std::vector<CalibrationLimit> *Limits) {
  DeviceSpec D = Base;
  D.opKinds.clear();
  std::vector<Weighted> All;
  double MeanMs = 0;
  for (const CalibrationSample &X : S)
    if (X.measuredMs > 0) All.push_back({&X, 1}), MeanMs += X.measuredMs;
  if (All.empty()) return D;
  MeanMs /= static_cast<double>(All.size());
  for (Weighted &X : All) X.weight = 1 + X.sample->measuredMs / MeanMs;

  // The device: peak FLOP/s, bandwidth, overhead.
  double Log[3] = {std::log10(D.peakFlops), std::log10(D.memBandwidth),
                   std::log10(std::max(D.kernelOverheadMs, 1e-6))};
  const double DevStart[3] = {Log[0], Log[1], Log[2]};
  static const char *const DevNames[3] = {"peak FLOP/s", "bandwidth", "overhead"};
  static const char *const KindNames[3] = {"FLOP/s", "bandwidth", "overhead"};
  // Issue 37, item 7: no rate above the platform's peaks (a fit beyond
  // them only reaches the grid's edge: 453x on a PaddleOCR classifier).
  const double PeakLog[3] = {Log[0], Log[1], INFINITY};
  const std::function<double(const double *)> DevErr = [&](const double *T) {
    return logSse(All, std::pow(10, T[0]), std::pow(10, T[1]), std::pow(10, T[2]));
  };
  gridSearch(Log, DevErr, PeakLog);
  findLimits(Log, DevStart, PeakLog, DevErr, DevNames, "", static_cast<int>(All.size()), Limits);
  D.peakFlops = std::pow(10, Log[0]);
  D.memBandwidth = std::pow(10, Log[1]);
  D.kernelOverheadMs = std::pow(10, Log[2]);
  if (!O.perKind) return D;

  // Each op kind: its fractions of those peaks and its own overhead.
  std::map<std::string, std::vector<Weighted>> ByKind;
  for (const Weighted &X : All)
    if (!X.sample->kind.empty()) ByKind[X.sample->kind].push_back(X);
  for (const auto &KindSamples : ByKind) {
    // Named, not structured bindings: clang 14 cannot capture those in a lambda.
    const std::string &Kind = KindSamples.first;
    const std::vector<Weighted> &Ks = KindSamples.second;
    const double KindPeak[3] = {PeakLog[0] - Log[0], PeakLog[1] - Log[1], INFINITY};
    if (static_cast<int>(Ks.size()) < std::max(1, O.minKindSamples)) {
      // Too few samples for three parameters, but one or two still say how
      // far off the kind runs: a single efficiency on both peaks, with the
      // device's overhead (AlexNet's two LRNs ran 29x their roofline).
      double Scale = fitOneEfficiency(Ks, D, std::pow(10, std::min(KindPeak[0], KindPeak[1])), Kind, Limits);
      D.opKinds[Kind] = {Scale, Scale, D.kernelOverheadMs, static_cast<int>(Ks.size())};
      continue;
    }
    double KLog[3] = {0, 0, Log[2]};
    const double KStart[3] = {0, 0, Log[2]};
    const std::function<double(const double *)> KErr = [&](const double *T) {
      return logSse(Ks, D.peakFlops * std::pow(10, T[0]), D.memBandwidth * std::pow(10, T[1]),
                    std::pow(10, T[2]));
    };
    gridSearch(KLog, KErr, KindPeak);
    findLimits(KLog, KStart, KindPeak, KErr, KindNames, Kind, static_cast<int>(Ks.size()), Limits);
    D.opKinds[Kind] = {std::pow(10, KLog[0]), std::pow(10, KLog[1]), std::pow(10, KLog[2]),
                       static_cast<int>(Ks.size())};
  }
  normalizeToPeaks(D);
  return D;
}

HeldOutCheck onnxp::checkOnHeldOut(const std::vector<CalibrationSample> &S, const DeviceSpec &Base,
                                   const CalibrationOptions &O) {
  HeldOutCheck C;
  if (static_cast<int>(S.size()) < kMinJudgedSamples) return C;
  std::vector<CalibrationSample> Fit, Held;
  for (int I = 0; I < static_cast<int>(S.size()); ++I)
    (I % kHeldOutEvery == kHeldOutEvery - 1 ? Held : Fit).push_back(S[I]);
  C.heldOut = static_cast<int>(Held.size());
  C.before = fitQuality(Held, Base);
  C.after = fitQuality(Held, calibrateDevice(Fit, Base, O));
  C.worse = C.after.totalError > C.before.totalError && C.after.mape > C.before.mape;
  return C;
}
