// test/ort/runner/tensor_parallel.test.js - the runner's tensor-parallel
// all-reduces (issue 34 item 3; tools/ort-runner/tensor_parallel.js).
// Run: node --test test/ort/runner/ (ctest: ort-runner-node).
//
// pipeline.json's "tensor_parallel" block is checked field by field, and
// reducePartials adds the shards' partials only once all are in, in shard
// order, never over a tensor already made. No ONNX Runtime needed.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const {checkTensorParallel, reducePartials} = require('../../../tools/ort-runner/tensor_parallel');

function pipeline(edit) {
  const p = {
    stages: [
      {id: 0, name: 'tp0', outputs: [{tensor: 'Y.partial0'}]},
      {id: 1, name: 'tp1', outputs: [{tensor: 'Y.partial1'}]},
      {id: 2, name: 'next', outputs: [{tensor: 'Z'}]},
    ],
    tensor_parallel: {all_reduces: [{tensor: 'Y', op: 'sum', partials: ['Y.partial0', 'Y.partial1'], shards: [0, 1]}]},
  };
  if (edit) edit(p);
  return p;
}

const f32 = (values, dims = [values.length]) => ({type: 'float32', data: Float32Array.from(values), dims});

test('a valid block gives its all-reduces; none without the block', () => {
  assert.deepStrictEqual(checkTensorParallel(pipeline(), 'p.json').map((r) => r.tensor), ['Y']);
  assert.deepStrictEqual(checkTensorParallel(pipeline((p) => delete p.tensor_parallel), 'p.json'), []);
});

test('malformed all-reduces are one error naming the field', () => {
  const cases = [
    [(p) => (p.tensor_parallel = []), /"tensor_parallel" is not an object with a list "all_reduces"/],
    [(p) => delete p.tensor_parallel.all_reduces[0].tensor, /a tensor-parallel all-reduce has no "tensor"/],
    [(p) => (p.tensor_parallel.all_reduces[0].op = 'mean'), /all-reduce of 'Y': op "mean" is not "sum"/],
    [(p) => p.tensor_parallel.all_reduces[0].shards.pop(), /"partials" and "shards" are not two lists/],
    [(p) => (p.tensor_parallel.all_reduces[0].partials = ['Y.partial0']), /"partials" and "shards" are not two lists/],
    [(p) => (p.tensor_parallel.all_reduces[0].shards[1] = 7), /shard 7 is not a stage id/],
    [(p) => (p.tensor_parallel.all_reduces[0].shards = [1, 0]), /partial 'Y.partial0' is not an output of tp1/],
    [(p) => (p.tensor_parallel.all_reduces[0].tensor = 'Z'), /'Z' is also made by a stage or another all-reduce/],
  ];
  for (const [edit, re] of cases) assert.throws(() => checkTensorParallel(pipeline(edit), 'p.json'), re);
});

test('the partials are summed once all are in, and only then', () => {
  const reduces = pipeline().tensor_parallel.all_reduces;
  const pool = new Map([['Y.partial0', f32([1, 2, 3])]]);
  reducePartials(reduces, pool);
  assert.ok(!pool.has('Y'), 'summed before the second shard ran');
  pool.set('Y.partial1', f32([10, 20, 30.5]));
  reducePartials(reduces, pool);
  assert.deepStrictEqual(Array.from(pool.get('Y').data), [11, 22, 33.5]);
  assert.deepStrictEqual(pool.get('Y').dims, [3]);
  // A tensor already made is left alone.
  pool.set('Y.partial1', f32([0, 0, 0]));
  reducePartials(reduces, pool);
  assert.deepStrictEqual(Array.from(pool.get('Y').data), [11, 22, 33.5]);
});

test('partials of another shape or an integer type are errors', () => {
  const reduces = pipeline().tensor_parallel.all_reduces;
  const shape = new Map([['Y.partial0', f32([1, 2])], ['Y.partial1', f32([1, 2], [1, 2])]]);
  assert.throws(() => reducePartials(reduces, shape), /the partials differ in type or shape/);
  const ints = {type: 'int64', data: BigInt64Array.from([1n]), dims: [1]};
  assert.throws(() => reducePartials(reduces, new Map([['Y.partial0', ints], ['Y.partial1', ints]])),
                /partials of type int64 cannot be summed here/);
});
