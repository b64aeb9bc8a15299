// Times onnxruntime fp32 inference in-process: what bench/e2e/speed.sh compares `tessel sim` with.
//
//   node ort_time.js MODEL.onnx INPUT.npy [--runs N] [--threads T]
//     one warm-up session.run, then N timed ones (default 5); prints
//     {"ms_per_run": mean, "ms_min": ..., "runs": N, "intra_op_threads": T or "default"}.
//     --threads 0 (the default) leaves intraOpNumThreads unset: onnxruntime's own default,
//     one thread per physical core. Model loading and the warm-up are not timed.
// .npy input: little-endian float32, C order (what speed.sh writes).
'use strict';
const fs = require('fs');
const path = require('path');
const cache = process.env.TESSEL_CACHE || path.join(__dirname, '..', '..', '.cache');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));

function readF32Npy(file) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not .npy`);
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  if (!header.includes("'descr': '<f4'")) throw new Error(`${file}: not little-endian float32`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const bytes = buf.buffer.slice(buf.byteOffset + start + headerLen, buf.byteOffset + buf.length);
  return { shape, data: new Float32Array(bytes) };
}

function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
}

async function main(args) {
  const [model, input] = args;
  const runs = Number(option(args, '--runs', '5'));
  const threads = Number(option(args, '--threads', '0'));
  const options = { graphOptimizationLevel: 'all' };
  if (threads > 0) options.intraOpNumThreads = threads;
  const session = await ort.InferenceSession.create(model, options);
  const x = readF32Npy(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  await session.run(feeds);  // warm-up
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const mean = times.reduce((a, b) => a + b, 0) / runs;
  console.log(JSON.stringify({
    model: path.basename(model), runs, ms_per_run: mean, ms_min: Math.min(...times),
    intra_op_threads: threads > 0 ? threads : 'default',
  }));
}

main(process.argv.slice(2)).catch((e) => { console.error(`ort_time: ${e.message}`); process.exit(1); });
