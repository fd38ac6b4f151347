// test/ort/runner/schedule.test.js - the runner's training schedules and
// gradient buffers, without ONNX Runtime (issue 36). Run: node --test test/ort/runner/.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const {runSchedule, simulateSchedule} = require('../../../tools/ort-runner/schedule');
const {exposeAccumulators, lenField, varint} = require('../../../tools/ort-runner/accumulators');
const {fields} = require('../../../tools/ort-runner/protobuf_fields');

/// The written stages of a training graph on 2 devices (docs/output-format.md
/// §3): F on acc0, the loss stage FB on acc1, B on acc0 reading acc1's
/// gradient and acc0's stashed activation.
function twoDevicePlan() {
  const stages = [
    {id: 0, name: 's0', device: 'acc0', kind: 'F', inputs: ['X'], outputs: ['A']},
    {id: 1, name: 's1', device: 'acc1', kind: 'FB', inputs: ['A', 'L'], outputs: ['loss', 'A_grad']},
    {id: 2, name: 's2', device: 'acc0', kind: 'B', inputs: ['A_grad', 'A'], outputs: ['W_grad.flag']},
  ];
  const pipeline = {graph_inputs: [{name: 'X'}, {name: 'L'}], graph_outputs: [{name: 'loss'}, {name: 'W_grad.flag'}]};
  return {stages, pipeline};
}

/// Fake workers on a virtual clock that record the order runs start in.
async function order(schedule, M, durations) {
  const {stages, pipeline} = twoDevicePlan();
  const starts = [];
  const workers = stages.map((st) => ({stage: st, inputs: st.inputs, outputs: st.outputs, kind: st.kind, accumulators: []}));
  const makespan = await simulateSchedule(workers, pipeline, M, schedule, durations);
  // The same rules, logging starts: run once more with logging fakes.
  let clock = 0;
  const events = [];
  const fakes = workers.map((w, s) => ({...w, pending: null, request(msg) {
    starts.push(`${w.stage.name}:${msg.mb}`);
    return new Promise((resolve) => {
      this.pending = true;
      events.push({end: clock + durations[s], go: () => {
        this.pending = null;
        resolve({ms: durations[s], start: 0, end: clock, outputs: Object.fromEntries(w.outputs.map((n) => [n, true]))});
      }});
    });
  }}));
  const inputs = Array.from({length: M}, () => ({X: true, L: true}));
  let done = false;
  runSchedule(fakes, pipeline, inputs, schedule, () => {}).then(() => (done = true));
  while (!done) {
    await new Promise((r) => setImmediate(r));
    if (done || !events.length) break;
    events.sort((x, y) => x.end - y.end);
    const e = events.shift();
    clock = e.end;
    e.go();
  }
  return {starts, makespan};
}

test('GPipe: a device runs every forward before its backward stage', async () => {
  const {starts, makespan} = await order('gpipe', 4, [1, 2, 1]);
  const acc0 = starts.filter((s) => s.startsWith('s0') || s.startsWith('s2'));
  assert.deepStrictEqual(acc0, ['s0:0', 's0:1', 's0:2', 's0:3', 's2:0', 's2:1', 's2:2', 's2:3']);
  // s0 ends at 4, s1 (2 each) ends at 3,5,7,9 -> s2 runs 9..10 last: 10.
  assert.strictEqual(makespan, 10);
});

test('1F1B: the first device admits at most 2 forwards ahead of its backward', async () => {
  const {starts, makespan} = await order('1f1b', 4, [1, 2, 1]);
  const acc0 = starts.filter((s) => s.startsWith('s0') || s.startsWith('s2'));
  // Position 0 of 2 devices: micro-batch m waits for the backward of m-2.
  assert.deepStrictEqual(acc0, ['s0:0', 's0:1', 's2:0', 's0:2', 's2:1', 's0:3', 's2:2', 's2:3']);
  assert.ok(makespan >= 10, `makespan ${makespan}`);
});

test('a forward-only plan keeps the 1F1B in-flight bound of its stages', async () => {
  const stages = [{id: 0, name: 'a', device: 'acc0', kind: 'F', inputs: ['X'], outputs: ['H']},
                  {id: 1, name: 'b', device: 'acc1', kind: 'F', inputs: ['H'], outputs: ['Y']}];
  const pipeline = {graph_inputs: [{name: 'X'}], graph_outputs: [{name: 'Y'}]};
  const workers = stages.map((st) => ({stage: st, inputs: st.inputs, outputs: st.outputs, kind: 'F', accumulators: []}));
  // 3 micro-batches of 1 + 1: the pipeline's makespan is 4.
  assert.strictEqual(await simulateSchedule(workers, pipeline, 3, '1f1b', [1, 1]), 4);
  assert.strictEqual(await simulateSchedule(workers, pipeline, 3, 'gpipe', [1, 1]), 4);
});

test('a stage waiting for a tensor nobody makes is an error, not a hang', async () => {
  const stages = [{id: 0, name: 'a', device: 'acc0', kind: 'F', inputs: ['X', 'Ghost'], outputs: ['Y']}];
  const workers = stages.map((st) => ({stage: st, inputs: st.inputs, outputs: st.outputs, kind: 'F', accumulators: []}));
  await assert.rejects(simulateSchedule(workers, {graph_inputs: [{name: 'X'}], graph_outputs: [{name: 'Y'}]}, 2, 'gpipe', [1]),
                       /a waits for 'Ghost' of micro-batch 0, which no stage made/);
});

test('accumulators: micro-batch 0 resets, later ones get the previous buffer', async () => {
  const st = {id: 0, name: 'b', device: 'acc0', kind: 'B', inputs: ['G', 'buf', 'reset'], outputs: ['flag']};
  const acc = [{buffer: 'buf', reset: 'reset', out: 'buf/onnxp_accumulated'}];
  const seen = [];
  const w = {stage: st, inputs: st.inputs, kind: 'B', accumulators: acc, pending: null, async request(msg) {
    seen.push([msg.feeds.reset.data[0], msg.feeds.buf]);
    return {ms: 0, start: 0, end: 0, outputs: {'flag': 1, 'buf/onnxp_accumulated': `sum${msg.mb}`}};
  }};
  const r = await runSchedule([w], {graph_outputs: [{name: 'flag'}]}, [0, 1, 2].map(() => ({G: 1, buf: 'zeros'})), 'gpipe', () => {});
  assert.deepStrictEqual(seen, [[1, 'zeros'], [0, 'sum0'], [0, 'sum1']]);
  assert.deepStrictEqual(r.gradients, {'buf/onnxp_accumulated': 'sum2'});
});

test('exposeAccumulators declares the buffer output and makes it a graph output', () => {
  const str = (f, s) => lenField(f, Buffer.from(s));
  const node = Buffer.concat([str(1, 'W_grad.accumulation.buffer'), str(1, 'W_grad'), str(1, 'lazy_reset_grad'),
                              str(2, 'W_grad.accumulation.out'), str(3, 'acc'), str(4, 'InPlaceAccumulatorV2'),
                              str(7, 'com.microsoft')]);
  const type = lenField(1, Buffer.concat([varint(8), varint(1)])); // tensor_type {elem_type: 1}
  const input = Buffer.concat([str(1, 'W_grad.accumulation.buffer'), lenField(2, type)]);
  const model = Buffer.concat([varint(8), varint(8), lenField(7, Buffer.concat([lenField(1, node), lenField(11, input)]))]);
  const r = exposeAccumulators(model);
  assert.strictEqual(r.kind, 'B');
  assert.deepStrictEqual(r.accumulators, [{buffer: 'W_grad.accumulation.buffer', gradient: 'W_grad', reset: 'lazy_reset_grad',
                                           flag: 'W_grad.accumulation.out', out: 'W_grad.accumulation.buffer/onnxp_accumulated'}]);
  const graph = [...fields(r.model)].find(([f]) => f === 7)[2];
  const outs = [...fields(graph)].filter(([f]) => f === 12).map(([, , v]) => [...fields(v)]);
  assert.strictEqual(outs.length, 1);
  assert.strictEqual(outs[0][0][2].toString(), 'W_grad.accumulation.buffer/onnxp_accumulated');
  assert.deepStrictEqual(outs[0][1][2], type); // typed as the buffer
  const nodeOut = [...fields([...fields(graph)].find(([f]) => f === 1)[2])].filter(([f]) => f === 2).map(([, , v]) => v.toString());
  assert.deepStrictEqual(nodeOut, ['W_grad.accumulation.out', 'W_grad.accumulation.buffer/onnxp_accumulated']);
  // A model without accumulators is returned as it is.
  const plain = Buffer.concat([varint(8), varint(8)]);
  assert.strictEqual(exposeAccumulators(plain).model, plain);
});

test('replicas: micro-batches round-robin, each replica its own chain, gradients summed', async () => {
  // Issue 33 item 5: stage a on acc0 and acc1 (2 replicas), b on acc2 alone.
  const a = {id: 0, name: 'a', device: 'acc0', replica_devices: ['acc0', 'acc1']};
  const b = {id: 1, name: 'b', device: 'acc2', replica_devices: ['acc2']};
  const acc = [{buffer: 'buf', reset: 'reset', out: 'buf/onnxp_accumulated'}];
  const ran = [];
  const worker = (stage, device, replica, replicas, inputs, outputs) => ({
    stage, device, replica, replicas, kind: 'FB', inputs, accumulators: stage === a ? acc : [], pending: null,
    async request(msg) {
      ran.push(`${stage.name}@${device}:${msg.mb}`);
      const out = Object.fromEntries(outputs.map((n) => [n, msg.mb]));
      if (stage === a) {
        // The buffer: the previous one plus this micro-batch's number (reset: alone).
        const prev = msg.feeds.reset.data[0] ? 0 : msg.feeds.buf.data[0];
        out['buf/onnxp_accumulated'] = {type: 'float32', data: Float32Array.from([prev + msg.mb + 1]), dims: [1]};
      }
      return {ms: 0, start: 0, end: 0, outputs: out};
    }});
  const workers = [worker(a, 'acc0', 0, 2, ['X', 'buf', 'reset'], ['H']), worker(a, 'acc1', 1, 2, ['X', 'buf', 'reset'], ['H']),
                   worker(b, 'acc2', 0, 1, ['H'], ['Y'])];
  for (const schedule of ['gpipe', '1f1b']) {
    ran.length = 0;
    const inputs = Array.from({length: 5}, () => ({X: 1, buf: {type: 'float32', data: Float32Array.from([100]), dims: [1]}}));
    const r = await runSchedule(workers, {graph_outputs: [{name: 'Y'}]}, inputs, schedule, () => {});
    assert.deepStrictEqual(ran.filter((x) => x.startsWith('a@acc0')), ['a@acc0:0', 'a@acc0:2', 'a@acc0:4'], schedule);
    assert.deepStrictEqual(ran.filter((x) => x.startsWith('a@acc1')), ['a@acc1:1', 'a@acc1:3'], schedule);
    assert.strictEqual(ran.filter((x) => x.startsWith('b@')).length, 5, schedule);
    assert.deepStrictEqual(r.replicaMicroBatches, [[0, 2, 4], [1, 3], [0, 1, 2, 3, 4]]);
    assert.deepStrictEqual(r.outputs.map((o) => o.Y), [0, 1, 2, 3, 4]);
    // acc0's chain 1 + 3 + 5, acc1's 2 + 4 (each replica resets on its
    // first micro-batch, never adds the initial 100): the all-reduce 15.
    assert.deepStrictEqual([...r.gradients['buf/onnxp_accumulated'].data], [15], schedule);
  }
});

test('the all-reduce refuses replicas whose buffers differ in shape', () => {
  const {sumTensors} = require('../../../tools/ort-runner/schedule');
  assert.throws(() => sumTensors('g', [{type: 'float32', data: [1], dims: [1]}, {type: 'float32', data: [1, 2], dims: [2]}]),
                /the replicas' 'g' differ in type or shape/);
  assert.deepStrictEqual([...sumTensors('g', [{type: 'float32', data: [1, 2], dims: [2]}, {type: 'float32', data: [3, 4], dims: [2]}]).data],
                         [4, 6]);
});
