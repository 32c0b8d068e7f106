#!/usr/bin/env node
// `npm install`'s preinstall and `npm test`'s first step: on a Node.js older than 22 either a note
// that the fetched Node.js 24 will run the program, or one line naming the fix and exit 1 (SPEC §16;
// bin/node-runtime.js). npm runs it with the `node` first on PATH, the one the program would get.
import { checkNodeForNpm } from '../bin/node-runtime.js';

process.exitCode = checkNodeForNpm();
