// Runs an ONNX model with onnxruntime-node on .npy inputs: the outside fp32/int8 oracle.
//
//   node ort_run.js MODEL.onnx INPUT.npy OUTPUT.npy [--runs N]
//
// Reads a float32 .npy (v1.0 header), feeds it to the model's first input, writes the first
// output as float32 .npy and prints {"ms_per_run": ...} (mean over N runs after one warm-up).
'use strict';
const fs = require('fs');
const path = require('path');
const cache = process.env.TESSEL_CACHE || path.join(__dirname, '..', '..', '.cache');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not .npy`);
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  if (!header.includes("'<f4'")) throw new Error(`${file}: expected float32`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start + headerLen, buf.byteOffset + buf.length));
  return { shape, data };
}

function writeNpy(file, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.writeUInt8(0x93, 0); pre.write('NUMPY', 1, 'latin1'); pre.writeUInt8(1, 6); pre.writeUInt8(0, 7);
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 1;
  const [model, input, output] = args;
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' });
  const x = readNpy(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  let result = await session.run(feeds);  // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; ++i) result = await session.run(feeds);
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
  const y = result[session.outputNames[0]];
  writeNpy(output, y.dims, Float32Array.from(y.data));
  console.log(JSON.stringify({ model: path.basename(model), runs, ms_per_run: ms }));
}

main().catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
