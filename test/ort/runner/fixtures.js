// test/ort/runner/fixtures.js - stage folders for the runner's node tests.
//
// A one-node ONNX model (Identity X -> Y, float [2]) written with the
// runner's own protobuf helpers, and a pipeline.json around it, so that
// each test breaks one thing of an otherwise valid folder.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawnSync} = require('child_process');
const {lenField, varint} = require('../../../tools/ort-runner/accumulators');

const RUNNER = path.join(__dirname, '..', '..', '..', 'tools', 'ort-runner', 'run_pipeline.js');

const str = (field, s) => lenField(field, Buffer.from(s, 'utf8'));
const num = (field, n) => Buffer.concat([varint(field << 3), varint(n)]);

/// ValueInfoProto NAME: float [2].
function valueInfo(name) {
  const dim = lenField(1, num(1, 2)); // TensorShapeProto.dim {dim_value: 2}
  const tensor = Buffer.concat([num(1, 1), lenField(2, dim)]); // elem_type float, shape
  return Buffer.concat([str(1, name), lenField(2, lenField(1, tensor))]);
}

/// A serialized model: Identity IN -> OUT.
function identityModel(input = 'X', output = 'Y') {
  const node = Buffer.concat([str(1, input), str(2, output), str(3, 'id'), str(4, 'Identity')]);
  const graph = Buffer.concat([lenField(1, node), str(2, 'g'), lenField(11, valueInfo(input)), lenField(12, valueInfo(output))]);
  const opset = Buffer.concat([str(1, ''), num(2, 13)]);
  return Buffer.concat([num(1, 8), lenField(8, opset), lenField(7, graph)]);
}

/// A fresh folder with stage0.onnx (X -> Y) and its pipeline.json; EDIT(p,
/// dir) may change the pipeline before it is written, or return {raw: TEXT}
/// to write TEXT instead.

const made = [];
process.on('exit', () => made.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

/// A temporary folder, removed when the test process ends.
function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

function stageFolder(edit = () => {}) {
  const dir = tempDir('onnxp-runner-test-');
  fs.writeFileSync(path.join(dir, 'stage0.onnx'), identityModel());
  const p = {
    format: 'onnx-partition.pipeline/1', devices: ['acc0'],
    graph_inputs: [{name: 'X', elem_type: 1, shape: [2]}],
    stages: [{id: 0, name: 'stage0_acc0', device: 'acc0', file: 'stage0.onnx', nodes: 1,
              inputs: [{tensor: 'X', from: 'graph'}], outputs: [{tensor: 'Y', to: [], graph_output: true}]}],
    graph_outputs: [{name: 'Y', from: 0}],
  };
  const r = edit(p, dir);
  fs.writeFileSync(path.join(dir, 'pipeline.json'), r && r.raw !== undefined ? r.raw : JSON.stringify(p));
  return dir;
}

/// Runs the runner; {status, stdout, stderr}. A test that waits longer than
/// TIMEOUT ms is a hang.
function run(args, timeout = 60000) {
  const r = spawnSync(process.execPath, [RUNNER, ...args], {encoding: 'utf8', timeout});
  return {status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr};
}

module.exports = {identityModel, stageFolder, tempDir, run, RUNNER};
