// SPDX-License-Identifier: LGPL-2.1-or-later
// ort-ops.cjs — the ONNX Runtime peer of bench-ops: times one layer per line
// of stdin ("index kind threads min_ms args...") on ONNX Runtime's CPU
// provider and prints "index threads ms" per layer. The one-node models are
// written with ort-conv.cjs's protobuf encoder, weights as initializers;
// inputs are the pseudo-random values bench-ops feeds our kernels.
//   deconv  c_in h w c_out k stride pad       ConvTranspose, [1, c_in, h, w]
//   lstm    steps input hidden dirs            LSTM, X [steps, 1, input]
//   topk    n k                                TopK over [1, n]
//   nms     boxes classes max_out              NonMaxSuppression (iou 0.5, score 0.25)
'use strict';

const path = require('path');
const ort = require(path.join(process.env.M2I_ORT_NODE_MODULES, 'onnxruntime-node'));
const { vint, bytes, intsAttr, intAttr, fill, timeSession } = require('./ort-conv.cjs');

const FLOAT = 1, INT64 = 7;
function valueInfo(name, dims, elemType = FLOAT) {
  const shape = dims.flatMap((d) =>
    bytes(1, typeof d === 'string' ? bytes(2, d) : vint(1, d)));   // dim_param or dim_value
  const tensorType = [...vint(1, elemType), ...bytes(2, shape)];
  return [...bytes(1, name), ...bytes(2, bytes(1, tensorType))];
}
const strAttr = (name, value) => [...bytes(1, name), ...vint(20, 3), ...bytes(4, value)];
function initializer(name, dims, data, dataType = FLOAT) {
  return bytes(5, [...dims.flatMap((d) => vint(1, d)), ...vint(2, dataType), ...bytes(8, name),
    ...bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))]);
}
function model(node, inits, inputs, outputs) {
  const graph = [...bytes(1, node), ...bytes(2, 'g'), ...inits.flat(),
    ...inputs.flatMap((v) => bytes(11, v)), ...outputs.flatMap((v) => bytes(12, v))];
  const opset = [...bytes(1, ''), ...vint(2, 13)];
  return Uint8Array.from([...vint(1, 8), ...bytes(8, opset), ...bytes(7, graph)]);
}
const node = (op, ins, outs, attrs) => [...ins.flatMap((n) => bytes(1, n)),
  ...outs.flatMap((n) => bytes(2, n)), ...bytes(4, op), ...attrs.flatMap((a) => bytes(5, a))];

// The NMS inputs bench-ops makes: corners [y1, x1, y1 + h, x1 + w] in a
// 640 × 640 image, scores u³ (mostly low, as a detector's).
function nmsData(n, classes) {
  const u = fill(n * 4, 7, 0, 1);
  const boxes = new Float32Array(n * 4);
  for (let i = 0; i < n; i++) {
    const y = Math.fround(u[i * 4] * 600), x = Math.fround(u[i * 4 + 1] * 600);
    boxes[i * 4] = y;
    boxes[i * 4 + 1] = x;
    boxes[i * 4 + 2] = Math.fround(y + Math.fround(20 + Math.fround(u[i * 4 + 2] * 100)));
    boxes[i * 4 + 3] = Math.fround(x + Math.fround(20 + Math.fround(u[i * 4 + 3] * 100)));
  }
  const s = fill(classes * n, 8, 0, 1);
  for (let i = 0; i < s.length; i++) s[i] = Math.fround(Math.fround(s[i] * s[i]) * s[i]);
  return { boxes, scores: s };
}

function build(kind, a) {
  if (kind === 'deconv') {
    const [cin, h, w, cout, k, stride, pad] = a;
    const oh = stride * (h - 1) + k - 2 * pad, ow = stride * (w - 1) + k - 2 * pad;
    return {
      model: model(node('ConvTranspose', ['x', 'w'], ['y'], [intsAttr('kernel_shape', [k, k]),
        intsAttr('strides', [stride, stride]), intsAttr('pads', [pad, pad, pad, pad])]),
      [initializer('w', [cin, cout, k, k], fill(cin * cout * k * k, 2, -0.1, 0.1))],
      [valueInfo('x', [1, cin, h, w])], [valueInfo('y', [1, cout, oh, ow])]),
      feeds: { x: new ort.Tensor('float32', fill(cin * h * w, 1, -1, 1), [1, cin, h, w]) },
    };
  }
  if (kind === 'lstm') {
    const [t, i, hid, dirs] = a;
    return {
      model: model(node('LSTM', ['x', 'w', 'r', 'b'], ['y'], [intAttr('hidden_size', hid),
        strAttr('direction', dirs === 2 ? 'bidirectional' : 'forward')]),
      [initializer('w', [dirs, 4 * hid, i], fill(dirs * 4 * hid * i, 2, -0.05, 0.05)),
        initializer('r', [dirs, 4 * hid, hid], fill(dirs * 4 * hid * hid, 3, -0.05, 0.05)),
        initializer('b', [dirs, 8 * hid], fill(dirs * 8 * hid, 4, -0.1, 0.1))],
      [valueInfo('x', [t, 1, i])], [valueInfo('y', [t, dirs, 1, hid])]),
      feeds: { x: new ort.Tensor('float32', fill(t * i, 1, -1, 1), [t, 1, i]) },
    };
  }
  if (kind === 'topk') {
    const [n, k] = a;
    return {
      model: model(node('TopK', ['x', 'k'], ['v', 'i'], [intAttr('axis', 1)]),
      [initializer('k', [1], BigInt64Array.from([BigInt(k)]), INT64)],
      [valueInfo('x', [1, n])], [valueInfo('v', [1, k]), valueInfo('i', [1, k], INT64)]),
      feeds: { x: new ort.Tensor('float32', fill(n, 1, -1, 1), [1, n]) },
    };
  }
  const [n, classes, maxOut] = a;
  const d = nmsData(n, classes);
  return {
    model: model(node('NonMaxSuppression', ['boxes', 'scores', 'm', 'iou', 'thr'], ['sel'], []),
    [initializer('m', [1], BigInt64Array.from([BigInt(maxOut)]), INT64),
      initializer('iou', [1], Float32Array.from([0.5])),
      initializer('thr', [1], Float32Array.from([0.25]))],
    [valueInfo('boxes', [1, n, 4]), valueInfo('scores', [1, classes, n])],
    [valueInfo('sel', ['selected', 3], INT64)]),
    feeds: { boxes: new ort.Tensor('float32', d.boxes, [1, n, 4]),
      scores: new ort.Tensor('float32', d.scores, [1, classes, n]) },
  };
}

async function timeLayer(kind, threads, minMs, args) {
  const { model: m, feeds } = build(kind, args);
  const session = await ort.InferenceSession.create(m, {
    intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  return timeSession(session, feeds, minMs);
}

async function main() {
  const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter((l) => l.trim());
  console.log(`version ${ort.env.versions.common}`);
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    const [index, kind, threads, minMs] = [f[0], f[1], Number(f[2]), Number(f[3])];
    const ms = await timeLayer(kind, threads, minMs, f.slice(4).map(Number));
    console.log(`${index} ${threads} ${ms.toFixed(4)}`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
