// onnxruntime-node fp32 as a benchmark engine, driven line by line on stdin (see cpu_bench.cpp).
//
//   node ort_serve.js MODEL.onnx INPUT.npy [--threads N]
//
// Creates one session (graph optimisation 'all', intraOpNumThreads N, interOpNumThreads 1,
// sequential execution), runs one warm-up, prints {"ready": ...}, then answers per line:
//   run          -> {"ms": wall, "cpu_ms": process CPU milliseconds of one session.run}
//   output PATH  -> writes the first output as float32 .npy and {"written": PATH}
//   quit
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
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
  const at = args.indexOf('--threads');
  const threads = at >= 0 ? Number(args[at + 1]) : 1;
  const [model, input] = args;
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const x = readNpy(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  await session.run(feeds);  // warm-up
  console.log(JSON.stringify({ ready: 'ort', threads, version: ort.env.versions ? ort.env.versions.common : '' }));
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line === 'run') {
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      await session.run(feeds);
      const wall = Number(process.hrtime.bigint() - start) / 1e6;
      const used = process.cpuUsage(cpu);
      console.log(JSON.stringify({ ms: wall, cpu_ms: (used.user + used.system) / 1e3 }));
    } else if (line.startsWith('output ')) {
      const result = await session.run(feeds);
      const y = result[session.outputNames[0]];
      writeNpy(line.slice(7), y.dims, Float32Array.from(y.data));
      console.log(JSON.stringify({ written: line.slice(7) }));
    } else if (line === 'quit') {
      break;
    } else {
      console.log(JSON.stringify({ error: `unknown command: ${line}` }));
    }
  }
  process.exit(0);
}

main().catch((e) => { console.error(`ort_serve: ${e.message}`); process.exit(1); });
