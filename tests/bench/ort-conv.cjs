// SPDX-License-Identifier: LGPL-2.1-or-later
// ort-conv.cjs — the ONNX Runtime peer of bench-conv: times one Conv layer
// per line of stdin ("name c_in h w c_out k stride pad groups threads min_ms
// [swish [kw pad_w]]") on ONNX Runtime's CPU provider and prints "name
// threads ms" per layer. With swish 1 the layer is YOLO's Conv (with a bias)
// → Sigmoid → Mul (SiLU), as ONNX exports of Ultralytics models write it;
// kw and pad_w make the kernel k × kw with pads pad (H) and pad_w (W).
//
// The one-node ONNX model is written here by a minimal protobuf encoder (the
// field numbers of onnx.proto), with the weights as an initializer so
// ONNX Runtime may pre-pack them as it does for real models. Inputs and
// weights are the same pseudo-random values bench-conv uses.
//
// Run by bench-conv when M2I_ORT_NODE_MODULES names a node_modules folder
// holding onnxruntime-node (npm install --ignore-scripts onnxruntime-node).
'use strict';

const path = require('path');
const ort = require(path.join(process.env.M2I_ORT_NODE_MODULES, 'onnxruntime-node'));

function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const vint = (field, n) => [...key(field, 0), ...varint(n)];
function bytes(field, data) {
  const b = typeof data === 'string' ? [...Buffer.from(data, 'utf8')] : [...data];
  return [...key(field, 2), ...varint(b.length), ...b];
}

function valueInfo(name, dims) {
  const shape = dims.flatMap((d) => bytes(1, vint(1, d)));           // dim { dim_value }
  const tensorType = [...vint(1, 1), ...bytes(2, shape)];             // elem_type FLOAT, shape
  return [...bytes(1, name), ...bytes(2, bytes(1, tensorType))];      // name, type.tensor_type
}
const intsAttr = (name, values) =>
  [...bytes(1, name), ...vint(20, 7), ...values.flatMap((v) => vint(8, v))];
const intAttr = (name, value) => [...bytes(1, name), ...vint(20, 2), ...vint(3, value)];

const initializer = (name, dims, values) => [
  ...dims.flatMap((d) => vint(1, d)), ...vint(2, 1), ...bytes(8, name),
  ...bytes(9, new Uint8Array(values.buffer)),
];

function convModel(L, weights, bias) {
  const oh = Math.floor((L.h + 2 * L.pad - L.k) / L.stride) + 1;
  const ow = Math.floor((L.w + 2 * L.pad_w - L.kw) / L.stride) + 1;
  const wdims = [L.c_out, L.c_in / L.groups, L.k, L.kw];
  const conv = [
    ...bytes(1, 'x'), ...bytes(1, 'w'), ...(L.swish ? bytes(1, 'b') : []),
    ...bytes(2, L.swish ? 'c' : 'y'), ...bytes(4, 'Conv'),
    ...bytes(5, intsAttr('kernel_shape', [L.k, L.kw])),
    ...bytes(5, intsAttr('strides', [L.stride, L.stride])),
    ...bytes(5, intsAttr('pads', [L.pad, L.pad_w, L.pad, L.pad_w])),
    ...bytes(5, intAttr('group', L.groups)),
  ];
  const nodes = [...bytes(1, conv)];
  const inits = [...bytes(5, initializer('w', wdims, weights))];
  if (L.swish) {
    nodes.push(...bytes(1, [...bytes(1, 'c'), ...bytes(2, 's'), ...bytes(4, 'Sigmoid')]));
    nodes.push(...bytes(1, [...bytes(1, 'c'), ...bytes(1, 's'), ...bytes(2, 'y'),
      ...bytes(4, 'Mul')]));
    inits.push(...bytes(5, initializer('b', [L.c_out], bias)));
  }
  const graph = [
    ...nodes, ...bytes(2, 'g'), ...inits,
    ...bytes(11, valueInfo('x', [1, L.c_in, L.h, L.w])),
    ...bytes(12, valueInfo('y', [1, L.c_out, oh, ow])),
  ];
  const opset = [...bytes(1, ''), ...vint(2, 13)];
  return Uint8Array.from([...vint(1, 8), ...bytes(8, opset), ...bytes(7, graph)]);
}

// The same xorshift fill as kt_fill() in kernel-test.h.
function fill(n, seed, lo, hi) {
  const out = new Float32Array(n);
  let x = (Math.imul(seed, 2654435761) + 12345) >>> 0;
  for (let i = 0; i < n; i++) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    out[i] = Math.fround(lo + (hi - lo) * Math.fround((x >>> 8) * (1.0 / 16777216.0)));
  }
  return out;
}

async function timeLayer(L) {
  const w = fill(L.c_out * (L.c_in / L.groups) * L.k * L.kw, 2, -0.1, 0.1);
  const x = fill(L.c_in * L.h * L.w, 1, -1, 1);
  const b = fill(L.c_out, 3, -1, 1);
  const session = await ort.InferenceSession.create(convModel(L, w, b), {
    intraOpNumThreads: L.threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  const feeds = { x: new ort.Tensor('float32', x, [1, L.c_in, L.h, L.w]) };
  return timeSession(session, feeds, L.min_ms);
}

// Batches of about 2 ms until minMs have passed; the fastest batch counts
// (ms per run), as in bench-time.h. Releases the session.
async function timeSession(session, feeds, minMs) {
  let t0 = process.hrtime.bigint();
  await session.run(feeds);
  const once = Math.max(Number(process.hrtime.bigint() - t0) / 1e6, 1e-4);
  const batch = Math.min(10000, Math.max(1, Math.round(2 / once)));
  let best = Infinity;
  const start = process.hrtime.bigint();
  do {
    t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) await session.run(feeds);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6 / batch);
  } while (Number(process.hrtime.bigint() - start) / 1e6 < minMs);
  await session.release();
  return best;
}

async function main() {
  const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter((l) => l.trim());
  console.log(`version ${ort.env.versions.common}`);
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    const n = f.slice(1).map(Number);
    const L = { name: f[0], c_in: n[0], h: n[1], w: n[2], c_out: n[3], k: n[4],
      stride: n[5], pad: n[6], groups: n[7], threads: n[8], min_ms: n[9], swish: n[10] === 1,
      kw: n.length > 11 ? n[11] : n[4], pad_w: n.length > 12 ? n[12] : n[6] };
    console.log(`${L.name} ${L.threads} ${(await timeLayer(L)).toFixed(4)}`);
  }
}

// ort-ops.cjs builds its one-node models with the same encoder.
module.exports = { varint, key, vint, bytes, valueInfo, intsAttr, intAttr, fill, timeSession };

if (require.main === module)
  main().catch((e) => { console.error(e); process.exit(1); });
