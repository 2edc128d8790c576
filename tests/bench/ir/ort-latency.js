// Latency of ONNX Runtime (CPU execution provider) on one model, as the peer
// of m2i-ir-run -b. Usage: node ort-latency.js MODEL.onnx THREADS ITERATIONS
// Prints one JSON line: {"median": ms, "p90": ms, "input": name, "shape": [...]}
"use strict";
const ort = require("onnxruntime-node");

async function main() {
  const [model, threads, iterations] = [process.argv[2], +process.argv[3], +process.argv[4]];
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const name = session.inputNames[0];
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  let shape = process.env.M2I_BENCH_SHAPE ? process.env.M2I_BENCH_SHAPE.split(",").map(Number) :
    meta && meta.shape ? meta.shape.map((d) => (typeof d === "number" && d > 0 ? d : 1)) : null;
  if (!shape) throw new Error("cannot tell the input shape; set M2I_BENCH_SHAPE");
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 255) / 255;
  let feeds = { [name]: new ort.Tensor("float32", data, shape) };
  if (meta && meta.type === "float16") {
    const half = new Uint16Array(n);   // 0..1 values: exact enough as f16 for timing
    for (let i = 0; i < n; i++) half[i] = 0x3800;
    feeds = { [name]: new ort.Tensor("float16", half, shape) };
  }
  for (let i = 0; i < 10; i++) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const p90 = ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.9) - 1)];
  console.log(JSON.stringify({ median: ms[ms.length >> 1], p90, input: name, shape }));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
