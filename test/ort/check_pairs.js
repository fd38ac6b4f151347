#!/usr/bin/env node
// ===- test/ort/check_pairs.js - Recomputed tensors equal the originals ---===//
//
// The numerical check of recomputation (issue 14): MODEL is a model without
// inputs (its inputs are seeded initializers, see recomputeCheckModel in
// lib/Transforms/RecomputeRewrite.cpp) whose outputs come in pairs
// (original, recomputed copy). Runs it in ONNX Runtime and compares each
// pair; prints PASS and exits 0 when every max error relative to
// max(|original|, 1) is within --rtol (default 0: same kernels, same data,
// bit-identical results), else FAIL and 1.
//
//   node test/ort/check_pairs.js MODEL.onnx [--rtol R]
//
// Needs `npm install --ignore-scripts` in test/ort (onnxruntime-node).
//
// ===----------------------------------------------------------------------===//
'use strict';

async function main() {
  const args = process.argv.slice(2);
  let rtol = 0, model = null;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--rtol') rtol = Number(args[++i]);
    else if (args[i].startsWith('--')) { process.stderr.write(`error: unknown flag ${args[i]}\n`); process.exit(2); }
    else model = args[i];
  }
  if (!model || !(rtol >= 0)) {
    process.stderr.write('usage: node check_pairs.js MODEL.onnx [--rtol R]\n');
    process.exit(2);
  }
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    process.stderr.write('error: onnxruntime-node is not installed; run npm install --ignore-scripts in test/ort\n');
    process.exit(2);
  }
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
  const out = await session.run({});
  const names = session.outputNames;
  if (names.length % 2) throw new Error('outputs do not come in pairs');
  let ok = true;
  for (let i = 0; i < names.length; i += 2) {
    const a = out[names[i]], b = out[names[i + 1]];
    let rel = a.dims.join('x') === b.dims.join('x') ? 0 : Infinity;
    for (let k = 0; k < a.data.length && rel < Infinity; ++k) {
      const x = Number(a.data[k]), y = Number(b.data[k]);
      const e = Math.abs(x - y) / Math.max(Math.abs(x), 1);
      rel = Number.isNaN(e) ? Infinity : Math.max(rel, e);
    }
    console.log(`${names[i]} vs ${names[i + 1]}: ${a.data.length} values, max rel error ${rel}`);
    if (!(rel <= rtol)) ok = false;
  }
  console.log(ok ? 'PASS' : 'FAIL');
  process.exit(ok ? 0 : 1);
}

main().catch(e => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
