// test/ort/runner/action_schedule.test.js - pipeline.json's action lists run
// in their order (issue 35, item 4), without ONNX Runtime. Run: node --test test/ort/runner/.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const {actionLists, runActions} = require('../../../tools/ort-runner/action_schedule');
const {simulateSchedule} = require('../../../tools/ort-runner/schedule');

/// A training graph's written stages on 2 devices: F on acc0, the loss
/// stage FB on acc1, B on acc0 (docs/output-format.md §3), with the action
/// lists onnx-partition writes for them (ranks: acc0, acc1).
function plan(ranks) {
  const stages = [
    {id: 0, name: 's0', device: 'acc0', kind: 'F', inputs: ['X'], outputs: ['A']},
    {id: 1, name: 's1', device: 'acc1', kind: 'FB', inputs: ['A', 'L'], outputs: ['loss', 'A_grad']},
    {id: 2, name: 's2', device: 'acc0', kind: 'B', inputs: ['A_grad', 'A'], outputs: ['W_grad']},
  ];
  const pipeline = {graph_inputs: [{name: 'X'}, {name: 'L'}], graph_outputs: [{name: 'loss'}, {name: 'W_grad'}],
                    schedule_actions: {schedule: 'zb-h1', microbatches: 2, runnable: true, stage_ranks: [0, 1],
                                       ranks}};
  return {stages, pipeline};
}

const ZB_H1 = [{rank: 0, device: 'acc0', stages: [0, 2], actions: ['0F0', '0F1', '0I0', '0W0', '0I1', '0W1']},
               {rank: 1, device: 'acc1', stages: [1], actions: ['1F0', '1I0', '1F1', '1I1', '1W0', '1W1']}];

/// Runs the lists on fake workers (each run takes DURATIONS[stage] on a
/// virtual clock); returns the order runs started in, or throws.
async function run(ranks, durations = [1, 2, 1], made = plan(ranks)) {
  const {stages, pipeline} = made;
  const starts = [];
  let clock = 0;
  const events = [];
  const workers = stages.map((st, s) => ({stage: st, inputs: st.inputs, kind: st.kind, accumulators: [], request(msg) {
    starts.push(`${st.name}:${msg.mb}`);
    for (const n of st.inputs) assert.ok(msg.feeds[n], `${st.name} ran micro-batch ${msg.mb} without '${n}'`);
    return new Promise((resolve) => events.push({end: clock + durations[s], go: () =>
      resolve({ms: durations[s], start: clock - durations[s], end: clock,
               outputs: Object.fromEntries(st.outputs.map((n) => [n, `${n}:${msg.mb}`]))})}));
  }}));
  let result = null, error = null;
  runActions(workers, pipeline, [{X: 1, L: 1}, {X: 2, L: 2}], actionLists(pipeline), () => {})
      .then((r) => (result = r), (e) => (error = e));
  for (;;) {
    await new Promise((r) => setImmediate(r));
    if (result || error || !events.length) break;
    events.sort((x, y) => x.end - y.end);
    const e = events.shift();
    clock = e.end;
    e.go();
  }
  if (error) throw error;
  return {starts, result};
}

test('each device runs its listed order: F its forward stages, I its backward ones, W nothing', async () => {
  const {starts, result} = await run(ZB_H1);
  assert.deepStrictEqual(starts.filter((s) => !s.startsWith('s1')), ['s0:0', 's0:1', 's2:0', 's2:1']);
  assert.deepStrictEqual(starts.filter((s) => s.startsWith('s1')), ['s1:0', 's1:1']);
  assert.deepStrictEqual(result.outputs.map((o) => o.loss), ['loss:0', 'loss:1']);
  // GPipe-like lists on acc0 (both forwards first) give the same order here;
  // lists that run the backward of 0 between the forwards do not.
  const interleaved = [{...ZB_H1[0], actions: ['0F0', '0I0', '0W0', '0F1', '0I1', '0W1']}, ZB_H1[1]];
  const other = await run(interleaved);
  assert.deepStrictEqual(other.starts.filter((s) => !s.startsWith('s1')), ['s0:0', 's2:0', 's0:1', 's2:1']);
});

/// zb-v's written chunks on 2 devices (4 virtual stages dealt in a V:
/// 0 and 3 on acc0, 1 and 2 on acc1): each chunk's forward, the loss
/// chunk 3's forward and backward (FB), the backward of chunks 2, 1, 0.
function vPlan(ranks) {
  const stages = [
    {id: 0, name: 'f0', device: 'acc0', kind: 'F', inputs: ['X'], outputs: ['A0']},
    {id: 1, name: 'f1', device: 'acc1', kind: 'F', inputs: ['A0'], outputs: ['A1']},
    {id: 2, name: 'f2', device: 'acc1', kind: 'F', inputs: ['A1'], outputs: ['A2']},
    {id: 3, name: 'fb3', device: 'acc0', kind: 'FB', inputs: ['A2', 'L'], outputs: ['loss', 'G2']},
    {id: 4, name: 'b2', device: 'acc1', kind: 'B', inputs: ['G2', 'A1'], outputs: ['G1']},
    {id: 5, name: 'b1', device: 'acc1', kind: 'B', inputs: ['G1', 'A0'], outputs: ['G0']},
    {id: 6, name: 'b0', device: 'acc0', kind: 'B', inputs: ['G0', 'X'], outputs: ['W_grad']},
  ];
  const pipeline = {graph_inputs: [{name: 'X'}, {name: 'L'}], graph_outputs: [{name: 'loss'}, {name: 'W_grad'}],
                    schedule_actions: {schedule: 'zb-v', microbatches: 2, runnable: true, stage_ranks: [0, 1, 1, 0],
                                       ranks}};
  return {stages, pipeline};
}

const ZB_V = [{rank: 0, device: 'acc0', stages: [0, 3, 6], virtual_stages: [[0, 0], [3, 3], [6, 0]],
               actions: ['0F0', '0F1', '3F0', '3I0', '3W0', '3F1', '3I1', '3W1', '0I0', '0W0', '0I1', '0W1']},
              {rank: 1, device: 'acc1', stages: [1, 2, 4, 5], virtual_stages: [[1, 1], [2, 2], [4, 2], [5, 1]],
               actions: ['1F0', '2F0', '1F1', '2F1', '2I0', '1I0', '2W0', '1W0', '2I1', '1I1', '2W1', '1W1']}];

test('zb-v: <v>F runs only the forward stage of chunk v, <v>I only its backward', async () => {
  const {starts, result} = await run(ZB_V, [1, 1, 1, 1, 1, 1, 1], vPlan(ZB_V));
  const on = (names) => starts.filter((s) => names.includes(s.split(':')[0]));
  assert.deepStrictEqual(on(['f0', 'fb3', 'b0']), ['f0:0', 'f0:1', 'fb3:0', 'fb3:1', 'b0:0', 'b0:1']);
  assert.deepStrictEqual(on(['f1', 'f2', 'b2', 'b1']), ['f1:0', 'f2:0', 'f1:1', 'f2:1', 'b2:0', 'b1:0', 'b2:1', 'b1:1']);
  assert.deepStrictEqual(result.outputs.map((o) => o.W_grad), ['W_grad:0', 'W_grad:1']);
  // Without the pairs every action of a rank runs all its stages of that
  // direction: each chunk twice per micro-batch, refused.
  const unpaired = ZB_V.map(({virtual_stages: _, ...r}) => r);
  await assert.rejects(run(unpaired, [1, 1, 1, 1, 1, 1, 1], vPlan(unpaired)), /not each of 0..1 once/);
  // A pair naming another rank's virtual stage, or a stage not listed.
  const wrong = [{...ZB_V[0], virtual_stages: [[0, 1], [3, 3], [6, 0]]}, ZB_V[1]];
  await assert.rejects(run(wrong, [1, 1, 1, 1, 1, 1, 1], vPlan(wrong)), /stage 0 as virtual stage 1, a virtual stage of rank 1/);
  const stray = [{...ZB_V[0], virtual_stages: [[0, 0], [3, 3], [9, 0]]}, ZB_V[1]];
  await assert.rejects(run(stray, [1, 1, 1, 1, 1, 1, 1], vPlan(stray)), /"virtual_stages" needs \[stage id, virtual stage\] pairs/);
});

test('the predicted iteration of the lists: simulateSchedule with "actions"', async () => {
  const {stages, pipeline} = plan(ZB_H1);
  const workers = stages.map((st) => ({stage: st, inputs: st.inputs, outputs: st.outputs, kind: st.kind, accumulators: []}));
  // acc0: s0 0..1, 1..2; s1 on acc1 1..3, 3..5; s2 3..4, 5..6.
  assert.strictEqual(await simulateSchedule(workers, pipeline, 2, 'actions', [1, 2, 1]), 6);
});

test('lists that cannot run are errors, never hangs', async () => {
  // A backward listed before the forward it needs: the lists deadlock.
  const early = [{...ZB_H1[0], actions: ['0I0', '0F0', '0W0', '0F1', '0I1', '0W1']}, ZB_H1[1]];
  await assert.rejects(run(early), /deadlock: rank 0 \(acc0\) at 0I0 waits for 'A_grad' of micro-batch 0/);
  // A stage must run every micro-batch once.
  const twice = [{...ZB_H1[0], actions: ['0F0', '0F0', '0I0', '0W0', '0I1', '0W1']}, ZB_H1[1]];
  await assert.rejects(run(twice), /run s0 for micro-batches 0, 0, not each of 0..1 once/);
  await assert.rejects(run([ZB_H1[0], {...ZB_H1[1], stages: []}]), /stage s1 is in no rank's action list/);
  await assert.rejects(run([ZB_H1[0], {...ZB_H1[1], device: 'acc2'}]), /rank 1 runs on acc2 but its stage s1 on acc1/);
  await assert.rejects(run([ZB_H1[0], {...ZB_H1[1], actions: ['1F0', '1X0']}]), /'1X0' is not an action/);
  await assert.rejects(run([{...ZB_H1[0], actions: ['1F0', ...ZB_H1[0].actions]}, ZB_H1[1]]),
                       /rank 0 lists 1F0, an action of stage 1 of rank 1/);
  // Lists the stage models cannot run (a V schedule's chunks) say why.
  const {pipeline} = plan(ZB_H1);
  pipeline.schedule_actions = {schedule: 'zb-v', runnable: false, not_runnable: 'chunks'};
  assert.match(actionLists(pipeline).message, /zb-v action lists cannot run on these stage models: chunks/);
  assert.strictEqual(actionLists({}), null);
});

test('a stage\'s gradient accumulators chain over its runs in the listed order', async () => {
  // GPipe's lists run the backward last micro-batch first: the first run
  // (micro-batch 1) resets, micro-batch 0's run continues from its buffer.
  const gpipe = [{rank: 0, device: 'acc0', stages: [0, 2], actions: ['0F0', '0F1', '0B1', '0B0']},
                 {rank: 1, device: 'acc1', stages: [1], actions: ['1F0', '1F1', '1B1', '1B0']}];
  const {stages, pipeline} = plan(gpipe);
  stages[2].inputs = ['A_grad', 'A', 'buf', 'reset'];
  const fed = [];
  const workers = stages.map((st) => ({stage: st, inputs: st.inputs, kind: st.kind,
    accumulators: st.id === 2 ? [{buffer: 'buf', reset: 'reset', out: 'buf_out'}] : [],
    request(msg) {
      if (st.id === 2) fed.push(`mb${msg.mb} reset=${msg.feeds.reset.data[0]} buf=${msg.feeds.buf}`);
      const outputs = Object.fromEntries(st.outputs.map((n) => [n, `${n}:${msg.mb}`]));
      if (st.id === 2) outputs.buf_out = `sum after ${msg.mb}`;
      return Promise.resolve({ms: 1, start: 0, end: 1, outputs});
    }}));
  const r = await runActions(workers, pipeline, [{X: 1, L: 1, buf: 'initial'}, {X: 2, L: 2, buf: 'initial'}],
                             actionLists(pipeline), () => {});
  assert.deepStrictEqual(fed, ['mb1 reset=1 buf=initial', 'mb0 reset=0 buf=sum after 1']);
  assert.strictEqual(r.gradients.buf_out, 'sum after 0');
});

/// Issue 35, item 3: zb-h1's stages with the backward written as B and W
/// models (Transforms/WeightGradientSplit.h): s2 is acc0's B (the input
/// gradient G0, read by nobody here but kept to have one), w3 the loss
/// stage's weight gradients on acc1, w4 acc0's, each W model reading a
/// saved activation and an output gradient and accumulating into a buffer.
function wPlan(ranks) {
  const stages = [
    {id: 0, name: 's0', device: 'acc0', kind: 'F', inputs: ['X'], outputs: ['A']},
    {id: 1, name: 's1', device: 'acc1', kind: 'FB', inputs: ['A', 'L'], outputs: ['loss', 'A_grad', 'Y_grad']},
    {id: 2, name: 's2', device: 'acc0', kind: 'B', inputs: ['A_grad'], outputs: ['H_grad']},
    {id: 3, name: 'w3', device: 'acc1', kind: 'W', inputs: ['Y_grad', 'A', 'buf1', 'reset'], outputs: ['W1_grad']},
    {id: 4, name: 'w4', device: 'acc0', kind: 'W', inputs: ['H_grad', 'X', 'buf0', 'reset'], outputs: ['W0_grad']},
  ];
  const pipeline = {graph_inputs: [{name: 'X'}, {name: 'L'}], graph_outputs: [{name: 'loss'}],
                    schedule_actions: {schedule: 'zb-h1', microbatches: 2, runnable: true, stage_ranks: [0, 1], ranks}};
  return {stages, pipeline};
}

test('W runs the rank\'s weight-gradient stages, their accumulators chained over the W runs', async () => {
  const lists = [{rank: 0, device: 'acc0', stages: [0, 2, 4], actions: ['0F0', '0F1', '0I0', '0W0', '0I1', '0W1']},
                 {rank: 1, device: 'acc1', stages: [1, 3], actions: ['1F0', '1I0', '1F1', '1I1', '1W0', '1W1']}];
  const {stages, pipeline} = wPlan(lists);
  const order = [], fed = [];
  const workers = stages.map((st) => ({stage: st, inputs: st.inputs, kind: st.kind,
    accumulators: st.kind === 'W' ? [{buffer: st.inputs[2], reset: 'reset', out: `${st.inputs[2]}_out`}] : [],
    request(msg) {
      order.push(`${st.name}:${msg.mb}`);
      for (const n of st.inputs) assert.ok(msg.feeds[n] !== undefined, `${st.name} ran micro-batch ${msg.mb} without '${n}'`);
      if (st.kind === 'W') fed.push(`${st.name} mb${msg.mb} reset=${msg.feeds.reset.data[0]} buf=${msg.feeds[st.inputs[2]]}`);
      const outputs = Object.fromEntries(st.outputs.map((n) => [n, `${n}:${msg.mb}`]));
      if (st.kind === 'W') outputs[`${st.inputs[2]}_out`] = `${st.name} sum after ${msg.mb}`;
      return Promise.resolve({ms: 1, start: 0, end: 1, outputs});
    }}));
  const inputs = [0, 1].map((m) => ({X: m, L: m, buf0: 'initial', buf1: 'initial'}));
  const r = await runActions(workers, pipeline, inputs, actionLists(pipeline), () => {});
  // acc0: F F, then per micro-batch I (s2) and W (w4); acc1: w3 at its W's.
  const on = (d) => order.filter((s) => stages.find((st) => st.name === s.split(':')[0]).device === d);
  assert.deepStrictEqual(on('acc0'), ['s0:0', 's0:1', 's2:0', 'w4:0', 's2:1', 'w4:1']);
  assert.deepStrictEqual(on('acc1'), ['s1:0', 's1:1', 'w3:0', 'w3:1']);
  assert.deepStrictEqual(fed.filter((f) => f.startsWith('w4')), ['w4 mb0 reset=1 buf=initial', 'w4 mb1 reset=0 buf=w4 sum after 0']);
  assert.strictEqual(r.gradients.buf0_out, 'w4 sum after 1');
  assert.strictEqual(r.gradients.buf1_out, 'w3 sum after 1');
  // A B action runs the backward stages, then the W ones; a list without the
  // W stages' actions leaves them unrun: refused.
  const whole = [{...lists[0], actions: ['0F0', '0F1', '0B0', '0B1']}, {...lists[1], actions: ['1F0', '1F1', '1B0', '1B1']}];
  order.length = 0;
  await runActions(workers, wPlan(whole).pipeline, inputs, actionLists(wPlan(whole).pipeline), () => {});
  assert.deepStrictEqual(on('acc0'), ['s0:0', 's0:1', 's2:0', 'w4:0', 's2:1', 'w4:1']);
  const noW = [{...lists[0], actions: ['0F0', '0F1', '0I0', '0I1']}, lists[1]];
  await assert.rejects(runActions(workers, wPlan(noW).pipeline, inputs, actionLists(wPlan(noW).pipeline), () => {}),
                       /run w4 for micro-batches none, not each of 0..1 once/);
});
