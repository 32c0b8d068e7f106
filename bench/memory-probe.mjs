/**
 * Preloaded into a server (`node --import ./bench/memory-probe.mjs bin/stockist.js serve …`, with
 * BENCH_MEMORY_FILE set) by bench/idle-memory.mjs: on SIGUSR2 it runs a full collection and writes
 * the process's memory split to that file as JSON — `process.memoryUsage()`, V8's code and source
 * sizes (`v8.getHeapCodeStatistics()`), its heap spaces, and /proc/self/status's VmRSS, RssAnon,
 * RssFile, VmHWM and thread count — so one reading names where the resident megabytes are.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

const file = process.env.BENCH_MEMORY_FILE;
if (file) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const mb = (bytes) => Math.round(bytes / 1024 / 10.24) / 100;
  process.on('SIGUSR2', () => {
    gc();
    gc();
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    const usage = process.memoryUsage();
    const code = v8.getHeapCodeStatistics();
    const reading = {
      vmRss: kb('VmRSS') / 1024,
      rssAnon: kb('RssAnon') / 1024,
      rssFile: kb('RssFile') / 1024,
      vmHwm: kb('VmHWM') / 1024,
      threads: kb('Threads'),
      heapTotal: mb(usage.heapTotal),
      heapUsed: mb(usage.heapUsed),
      external: mb(usage.external),
      arrayBuffers: mb(usage.arrayBuffers),
      code: mb(code.code_and_metadata_size),
      bytecode: mb(code.bytecode_and_metadata_size),
      source: mb(code.external_script_source_size),
      spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_used_size)])),
    };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(reading));
    fs.renameSync(`${file}.tmp`, file);
    if (process.env.BENCH_HEAP_SNAPSHOT) v8.writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
  });
}
