#!/usr/bin/env node
// ===- test/ort/optimized_model.js - The graph ONNX Runtime runs -----------===//
//
// Loads MODEL in ONNX Runtime (CPU execution provider) at a graph
// optimization level (default 'all', onnxruntime-node's default) and writes
// the graph ORT will execute to OUT (ORT's optimizedModelFilePath): constant
// folding done, fused patterns replaced by their contrib kernels (Attention,
// SkipLayerNormalization, BiasGelu, FusedMatMul, ...). Issue 23's tests run
// `onnx-partition inspect` on OUT to check that the fusions the cost model
// assumes (lib/Cost/OrtGraphOptimizations.cpp) are the ones ORT makes.
//
//   node test/ort/optimized_model.js MODEL.onnx OUT.onnx [--level disabled|basic|extended|all]
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

function fail(msg) {
  console.error(`error: ${msg}`);
  process.exit(1);
}

async function main() {
  const args = process.argv.slice(2);
  let level = 'all';
  const files = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--level') level = args[++i];
    else files.push(args[i]);
  }
  if (files.length !== 2) fail('usage: optimized_model.js MODEL.onnx OUT.onnx [--level disabled|basic|extended|all]');
  if (!['disabled', 'basic', 'extended', 'all'].includes(level)) fail(`--level ${level}: expected disabled, basic, extended or all`);
  const [model, out] = files;
  if (!fs.existsSync(model)) fail(`${model}: no such file`);
  // Write next to OUT and rename, so a failed load leaves no partial file.
  const tmp = `${out}.tmp-${process.pid}`;
  try {
    await ort.InferenceSession.create(model, {
      graphOptimizationLevel: level,
      optimizedModelFilePath: tmp,
      executionProviders: ['cpu'],
      logSeverityLevel: 3, // ORT warns that a level-3 graph is hardware specific
    });
    fs.renameSync(tmp, out);
  } catch (e) {
    if (fs.existsSync(tmp)) fs.unlinkSync(tmp);
    fail(`${model}: ONNX Runtime could not load it: ${e.message}`);
  }
}

main();
