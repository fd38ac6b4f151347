// ===- tools/ort-runner/text_models.js - ONNX text models made binary -===//
//
// ONNX Runtime reads binary protobuf only; the project's examples are ONNX
// text (examples/mlp_skip.onnxtxt). A model given to the runner in text is
// converted by the tool itself, `onnx-partition print MODEL --binary OUT`
// (docs/output-format.md §5), found as --tool, $ONNX_PARTITION, the
// checkout's build/tools/onnx-partition beside this folder, or on PATH.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawnSync} = require('child_process');

/// Whether FILE holds ONNX text rather than a binary ModelProto: its name
/// says so, or it starts (after blanks and comments) with '<' or a letter; a
/// serialized ModelProto starts with a field key byte (ir_version: 0x08).
function isTextModel(file) {
  if (/\.(onnxtxt|onnxtext|txt)$/i.test(file)) return true;
  const fd = fs.openSync(file, 'r');
  const head = Buffer.alloc(256);
  const n = fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
  const s = head.subarray(0, n).toString('latin1').replace(/^(\s|#[^\n]*\n)*/, '');
  return /^[<A-Za-z]/.test(s) && !/[\x00-\x08]/.test(head.subarray(0, Math.min(n, 32)).toString('latin1'));
}

function findTool(given) {
  const candidates = [given, process.env.ONNX_PARTITION,
                      path.join(__dirname, '..', '..', 'build', 'tools', 'onnx-partition')].filter(Boolean);
  for (const c of candidates) if (fs.existsSync(c)) return c;
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const c = path.join(dir, 'onnx-partition');
    if (dir && fs.existsSync(c)) return c;
  }
  return '';
}

/// FILE itself when binary; else a binary copy in a temporary folder
/// (removed by cleanup()). Throws with one message when no tool converts it.
function binaryModel(file, tool) {
  if (!isTextModel(file)) return {file, cleanup: () => {}};
  const exe = findTool(tool);
  if (!exe)
    throw new Error(`${file} is ONNX text; converting it needs onnx-partition (give --tool PATH, set ONNX_PARTITION, ` +
                    'or put it on PATH), or convert it yourself: onnx-partition print MODEL --binary OUT.onnx');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxp-run-text-'));
  const out = path.join(dir, path.basename(file).replace(/\.[^.]*$/, '') + '.onnx');
  const r = spawnSync(exe, ['print', file, '--binary', out], {stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8'});
  if (r.status !== 0 || !fs.existsSync(out)) {
    fs.rmSync(dir, {recursive: true, force: true});
    const msg = (r.stderr || (r.error && r.error.message) || '').trim().split('\n')[0].replace(/^error:\s*/, '');
    throw new Error(`${file}: ${exe} print --binary failed: ${msg}`);
  }
  return {file: out, cleanup: () => fs.rmSync(dir, {recursive: true, force: true})};
}

module.exports = {binaryModel, isTextModel, findTool};
