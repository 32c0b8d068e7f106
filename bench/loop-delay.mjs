/**
 * Preloaded into the bench's API server for the evidence-upload scenario
 * (`--import bench/loop-delay.mjs`, with BENCH_LOOP_DELAY_FILE set): the server's own event-loop
 * delay (perf_hooks.monitorEventLoopDelay). On SIGUSR2 it writes the delay since the last signal —
 * p50, p99, max and mean in ms — to that file as JSON and starts over, so the bench reads one leg's
 * delay at a time. Measured inside the server, it is not moved by the load generator's own event loop.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  process.on('SIGUSR2', () => {
    const delay = { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), mean: ms(histogram.mean) };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(delay));
    fs.renameSync(`${file}.tmp`, file);
    histogram.reset();
  });
}
