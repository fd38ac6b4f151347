// test/ort/runner/pipeline_json.test.js - the runner does not trust pipeline.json
// (issue 39 item 8). Run: node --test test/ort/runner/ (ctest: ort-runner-node).
//
// Each case breaks one thing of a valid one-stage folder and expects one
// `error:` line, a non-zero exit, no JavaScript stack and no hang (each run
// is killed after 60 s, which fails the test). None of them needs ONNX
// Runtime: the checks come before any session opens.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const {stageFolder, identityModel, tempDir, run} = require('./fixtures');

/// One error line matching RE, exit CODE, no stack, nothing on stdout.
function expectError(r, re, code = 1) {
  assert.strictEqual(r.signal, null, `killed (${r.signal}): the runner hung`);
  assert.strictEqual(r.status, code, `exit ${r.status}; stderr: ${r.stderr}`);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('error:'));
  assert.strictEqual(errors.length, 1, `one error line expected: ${r.stderr}`);
  assert.match(errors[0], re);
  assert.doesNotMatch(r.stderr, /TypeError|ReferenceError|RangeError|\n\s+at /);
}

test('cyclic stage inputs are an error, not a hang', () => {
  const dir = stageFolder((p) => {
    p.stages.push({id: 1, name: 'stage1_acc1', device: 'acc1', file: 'stage0.onnx',
                   inputs: [{tensor: 'Z', from: 2}], outputs: [{tensor: 'W', to: [2]}]});
    p.stages.push({id: 2, name: 'stage2_acc0', device: 'acc0', file: 'stage0.onnx',
                   inputs: [{tensor: 'W', from: 1}], outputs: [{tensor: 'Z', to: [1]}]});
  });
  expectError(run([dir]), /the stages' inputs form a cycle \(stage1_acc1, stage2_acc0\)/);
});

test('a graph output no stage makes is an error, not a hang', () => {
  const dir = stageFolder((p) => p.graph_outputs.push({name: 'Nowhere', from: 0}));
  expectError(run([dir]), /graph output 'Nowhere' is made by no stage/);
});

test('an input pipeline.json lists but no stage makes stops the run', () => {
  // The stage's session reads X; pipeline.json says X comes from the graph
  // but lists no such graph input: the schedule cannot progress.
  const dir = stageFolder((p) => (p.graph_inputs = []));
  const r = run([dir, '--micro-batches', '2']);
  if (/onnxruntime-node is not installed/.test(r.stderr)) return; // no ORT here
  expectError(r, /stage0_acc0 waits for 'X' of micro-batch 0, which no stage made/);
});

test('--micro-batches is capped', () => {
  const dir = stageFolder();
  expectError(run([dir, '--micro-batches', '1e9']), /--micro-batches needs an integer in \[1, 4096\], got '1e9'/, 2);
  expectError(run([dir, '--micro-batches', '4097']), /--micro-batches needs an integer in \[1, 4096\]/, 2);
  expectError(run([dir, '--threads', '100000']), /--threads needs an integer in \[1, 256\]/, 2);
  expectError(run([dir, '--dim', 'N=1e12']), /--dim wants NAME=V with V in \[1, 268435456\]/, 2);
});

test('--json, --profile and --trace never overwrite an input', () => {
  const dir = stageFolder();
  const pj = path.join(dir, 'pipeline.json'), st = path.join(dir, 'stage0.onnx');
  const before = [fs.readFileSync(pj), fs.readFileSync(st)];
  expectError(run([dir, '--json', pj]), /--json .*pipeline.json would overwrite the input .*pipeline.json/);
  expectError(run([dir, '--profile', st]), /--profile .*stage0.onnx would overwrite the input .*stage0.onnx/);
  // The same file by another name: a hard link.
  const link = path.join(os.tmpdir(), `onnxp-runner-link-${process.pid}.onnx`);
  fs.rmSync(link, {force: true});
  fs.linkSync(st, link);
  expectError(run([dir, '--trace', link]), /--trace .* would overwrite the input .*stage0.onnx/);
  fs.rmSync(link);
  const orig = path.join(dir, 'orig.onnx');
  fs.writeFileSync(orig, identityModel());
  expectError(run([dir, '--original', orig, '--json', orig]), /--json .*orig.onnx would overwrite the input/);
  expectError(run([dir, '--json', path.join(dir, 'r.json'), '--trace', path.join(dir, 'r.json')]),
              /--trace .*r.json is also the file of --json/);
  assert.deepStrictEqual([fs.readFileSync(pj), fs.readFileSync(st)], before);
});

test('stage files stay inside the stage folder', () => {
  // A valid model outside the folder is not run.
  const outside = tempDir('onnxp-runner-outside-');
  fs.writeFileSync(path.join(outside, 'x.onnx'), identityModel());
  const rel = stageFolder((p, dir) => (p.stages[0].file = path.relative(dir, path.join(outside, 'x.onnx'))));
  expectError(run([rel]), /stage0_acc0: stage file '\.\.\/.*x\.onnx' is not a relative path inside the stage folder/);
  const abs = stageFolder((p) => (p.stages[0].file = '/etc/passwd'));
  expectError(run([abs]), /stage file '\/etc\/passwd' is not a relative path inside the stage folder/);
  const linked = stageFolder((p, dir) => {
    fs.symlinkSync(path.join(outside, 'x.onnx'), path.join(dir, 'link.onnx'));
    p.stages[0].file = 'link.onnx';
  });
  expectError(run([linked]), /stage file 'link\.onnx' leads outside the stage folder/);
});

test('a missing or empty stage file is named as such', () => {
  const missing = stageFolder((p) => (p.stages[0].file = 'gone.onnx'));
  expectError(run([missing]), /stage0_acc0: stage file 'gone\.onnx' does not exist in/);
  const empty = stageFolder((p, dir) => {
    fs.writeFileSync(path.join(dir, 'empty.onnx'), '');
    p.stages[0].file = 'empty.onnx';
  });
  expectError(run([empty]), /stage0_acc0: stage file 'empty\.onnx' is empty/);
  const dirAsFile = stageFolder((p, dir) => {
    fs.mkdirSync(path.join(dir, 'sub.onnx'));
    p.stages[0].file = 'sub.onnx';
  });
  expectError(run([dirAsFile]), /stage file 'sub\.onnx' is not a regular file/);
});

test('"stages": [] is an error', () => {
  const dir = stageFolder((p) => (p.stages = []));
  expectError(run([dir]), /"stages" is empty: no stage to run/);
});

test('malformed pipeline.json: one error line, never a JavaScript TypeError', () => {
  const cases = [
    ['{', /not JSON/],
    ['[]', /not a JSON object/],
    ['null', /not a JSON object/],
    [(p) => (p.format = 'x'), /not an onnx-partition pipeline/],
    [(p) => (p.stages = {}), /"stages" is not a list/],
    [(p) => (p.stages = [null]), /stage 0 is not an object/],
    [(p) => (p.stages[0].name = 7), /stage 0 has no string "name"/],
    [(p) => delete p.stages[0].file, /stage 0 has no string "file"/],
    [(p) => (p.stages[0].inputs = 'X'), /"inputs" is not a list/],
    [(p) => (p.stages[0].inputs = [null]), /has an input without "tensor"/],
    [(p) => (p.stages[0].inputs = [{tensor: 'X', from: 9}]), /reads 'X' from stage 9, which is not listed/],
    [(p) => p.stages.push({...p.stages[0]}), /id 0 is listed twice/],
    [(p) => (p.graph_inputs = 3), /"graph_inputs" is not a list/],
    [(p) => (p.graph_inputs = [null]), /a graph input has no name/],
    [(p) => (p.graph_outputs = [{}]), /a graph output has no name/],
    [(p) => (p.replicated_parameters = 5), /"replicated_parameters" is not a list/],
    [(p) => (p.graph_inputs[0].elem_type = 99), /graph input 'X' has element type 99, not supported here/],
    [(p) => (p.graph_inputs[0].shape = 'big'), /graph input 'X': "shape" is not a list/],
    [(p) => (p.graph_inputs[0].shape = [1e6, 1e6]), /graph input 'X' of shape \[1000000, 1000000\] has more than/],
    [(p) => (p.stages[0].kind = 'B'), /stage 0: "kind" is "B", not "W"/],
  ];
  // Every case in-process (checkPipeline, or the runner's input checks
  // through a spawn for the graph-input cases), and a few through the
  // whole runner: one error line, exit 1.
  const {checkPipeline} = require('../../../tools/ort-runner/pipeline_check');
  const spawned = new Set([0, 5, 9, 15, 16, 17, 18]);
  cases.forEach(([edit, re], i) => {
    const dir = stageFolder((p) => (typeof edit === 'string' ? {raw: edit} : (edit(p), undefined)));
    if (spawned.has(i)) {
      const r = run([dir]);
      if (/onnxruntime-node is not installed/.test(r.stderr)) return;
      expectError(r, re);
    } else {
      const text = fs.readFileSync(path.join(dir, 'pipeline.json'), 'utf8');
      assert.throws(() => checkPipeline(JSON.parse(text), dir), re, `case ${i}`);
    }
  });
});

test('a stage file that is not ONNX is one error line', () => {
  const dir = stageFolder((p, d) => fs.writeFileSync(path.join(d, 'stage0.onnx'), 'not a model \x07\x07'));
  expectError(run([dir]), /stage0_acc0: /);
});

test('malformed replica fields: one error naming the stage and field', () => {
  // Issue 33 item 5: a valid folder whose one stage runs on acc0 and acc1.
  const replicated = (p) => {
    p.devices = ['acc0', 'acc1', 'acc2'];
    p.stages[0].replica_devices = ['acc0', 'acc1'];
    p.stages[0].allreduce_group = 0;
    p.allreduce_groups = [{id: 0, devices: ['acc0', 'acc1'], stages: [0]}];
  };
  const {checkPipeline} = require('../../../tools/ort-runner/pipeline_check');
  const ok = stageFolder(replicated);
  const p = JSON.parse(fs.readFileSync(path.join(ok, 'pipeline.json'), 'utf8'));
  checkPipeline(p, ok);
  assert.deepStrictEqual(p.stages[0].replica_devices, ['acc0', 'acc1']);
  const cases = [
    [(p) => (p.stages[0].replica_devices = ['acc0', 'acc7']), /replica device 'acc7' is not one of "devices"/],
    [(p) => (p.stages[0].replica_devices = ['acc0', 'acc1', 'acc1']), /replica device 'acc1' is listed twice/],
    [(p) => (p.stages[0].replica_devices = ['acc1', 'acc0']), /must start with the stage's own device acc0, not acc1/],
    [(p) => (p.stages[0].replica_devices = 'acc0,acc1'), /"replica_devices" is not a non-empty list of device names/],
    [(p) => (p.stages[0].replica_devices = []), /"replica_devices" is not a non-empty list/],
    [(p) => (p.stages[0].allreduce_group = 3), /"allreduce_group" 3 is not an id of "allreduce_groups"/],
    [(p) => delete p.stages[0].allreduce_group, /"allreduce_group" undefined is not an id/],
    [(p) => (p.allreduce_groups[0].devices = ['acc0', 'acc2']), /all-reduce group 0 lists \[acc0, acc2\], not its replica devices \[acc0, acc1\]/],
    [(p) => (p.allreduce_groups = {}), /"allreduce_groups" is not a list/],
    [(p) => (p.allreduce_groups = [null]), /an all-reduce group is not an object/],
    [(p) => p.allreduce_groups.push({id: 0, devices: []}), /all-reduce group 0 is listed twice/],
    [(p) => (p.stages[0].replica_device_ids = [0]), /"replica_device_ids" is not a list of 2 integers/],
    [(p) => (p.stages[0].reduced_gradients = [{gradient: 'W_grad'}]), /"reduced_gradients" is not a list of \{gradient, accumulation_buffer\}/],
    [(p) => {
      delete p.stages[0].replica_devices;
    }, /"allreduce_group" or "reduced_gradients" without "replica_devices"/],
    // A second stage on acc1 (a lent device) or on acc0 without the replicas.
    [(p) => p.stages.push({...p.stages[0], id: 1, name: 's1', device: 'acc1', replica_devices: undefined, allreduce_group: undefined}),
     /replica device 'acc1' also runs stages of its own/],
    [(p) => p.stages.push({...p.stages[0], id: 1, name: 's1', replica_devices: undefined, allreduce_group: undefined}),
     /its replica devices \[acc0, acc1\] differ from those of s1 on the same device \[acc0\]/],
    [(p) => {
      p.stages.push({...p.stages[0], id: 1, name: 's1', device: 'acc2', replica_devices: ['acc2', 'acc1'], allreduce_group: 1});
      p.allreduce_groups.push({id: 1, devices: ['acc2', 'acc1']});
    }, /replica device 'acc1' also runs replicas of acc0/],
  ];
  // In-process, and the first through the whole runner: one line, exit 1.
  cases.forEach(([edit, re], i) => {
    const dir = stageFolder((p) => {
      replicated(p);
      edit(p);
    });
    if (i === 0) {
      expectError(run([dir]), re);
    } else {
      const text = fs.readFileSync(path.join(dir, 'pipeline.json'), 'utf8');
      assert.throws(() => checkPipeline(JSON.parse(text), dir), re, `case ${i}`);
    }
  });
});
