#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx's loader: no build step between a change and a run.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
