// test/ort/runner/pipeline_fuzz.test.js - mutated pipeline.json (issue 39
// item 8): seeded random mutations of a valid two-stage pipeline.json. Each
// is either accepted or refused by checkPipeline with an Error of its own
// (never a TypeError or RangeError from reading a field it did not check);
// a sample goes through the whole runner: one `error:` line or a run, never
// a stack or a hang.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');
const {stageFolder, run} = require('./fixtures');
const {checkPipeline} = require('../../../tools/ort-runner/pipeline_check');
const {rng} = require('../../../tools/ort-runner/seeded_random');

const ODD = [null, true, -1, 0, 1e300, NaN, '', '..', '/etc/passwd', 'stage0.onnx', [], {}, [null], {tensor: 1},
             'graph', 2 ** 53, -0.5, [[]], {from: 'graph'}];

/// Every [object, key] path of a JSON value.
function paths(v, out = [], at = []) {
  if (v && typeof v === 'object')
    for (const k of Object.keys(v)) {
      out.push([...at, k]);
      paths(v[k], out, [...at, k]);
    }
  return out;
}

function mutate(p, next) {
  const all = paths(p);
  const n = 1 + Math.floor(next() * 3);
  for (let i = 0; i < n && all.length; ++i) {
    const at = all[Math.floor(next() * all.length)];
    let o = p;
    for (const k of at.slice(0, -1)) o = o && typeof o === 'object' ? o[k] : undefined;
    if (!o || typeof o !== 'object') continue;
    const k = at[at.length - 1], r = next();
    if (r < 0.2) delete o[k];
    else if (r < 0.4 && Array.isArray(o)) o.push(JSON.parse(JSON.stringify(o[k] === undefined ? null : o[k])));
    else o[k] = ODD[Math.floor(next() * ODD.length)];
  }
}

function twoStages(p) {
  p.stages[0].outputs = [{tensor: 'Y', to: [1], graph_output: false}];
  p.stages.push({id: 1, name: 'stage1_acc1', device: 'acc1', file: 'stage1.onnx',
                 inputs: [{tensor: 'Y', from: 0}], outputs: [{tensor: 'Z', to: [], graph_output: true}]});
  p.graph_outputs = [{name: 'Z', from: 1}];
}

test('500 mutated pipeline.json files: accepted or one Error of the checker', () => {
  const next = rng(36);
  const dir = stageFolder(twoStages);
  fs.copyFileSync(path.join(dir, 'stage0.onnx'), path.join(dir, 'stage1.onnx'));
  const base = JSON.parse(fs.readFileSync(path.join(dir, 'pipeline.json'), 'utf8'));
  let refused = 0;
  for (let i = 0; i < 500; ++i) {
    let p = JSON.parse(JSON.stringify(base));
    mutate(p, next);
    p = JSON.parse(JSON.stringify(p)); // as the runner reads it (an array hole is null)
    try {
      checkPipeline(p, dir);
    } catch (e) {
      assert.ok(!(e instanceof TypeError) && !(e instanceof RangeError), `mutation ${i}: ${e.stack}\n${JSON.stringify(p)}`);
      ++refused;
    }
  }
  assert.ok(refused > 100, `only ${refused} of 500 mutations refused: the mutator is too weak`);
});

test('mutated pipeline.json through the runner: one error line or a run', () => {
  const next = rng(39);
  for (let i = 0; i < 6; ++i) {
    const dir = stageFolder((p) => {
      twoStages(p);
      mutate(p, next);
    });
    fs.copyFileSync(path.join(dir, 'stage0.onnx'), path.join(dir, 'stage1.onnx'));
    const r = run([dir, '--micro-batches', '2']);
    assert.strictEqual(r.signal, null, `mutation ${i} hung: ${fs.readFileSync(path.join(dir, 'pipeline.json'))}`);
    assert.doesNotMatch(r.stderr, /TypeError|ReferenceError|RangeError|\n\s+at /, `mutation ${i}: ${r.stderr}`);
    if (r.status !== 0) assert.strictEqual(r.stderr.split('\n').filter((l) => l.startsWith('error:')).length, 1, r.stderr);
  }
});
