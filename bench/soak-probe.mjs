// Loaded into the soaked relay with NODE_OPTIONS=--import (bench/soak.ts): every
// SVC_SOAK_PROBE_MS it runs a full collection (when --expose-gc allows) and appends the
// process's memory to the file SVC_SOAK_PROBE as one JSON line, so the heap the relay keeps is
// read from outside without any route of its own. The timer never keeps the relay alive.
import { appendFileSync } from 'node:fs';

const file = process.env.SVC_SOAK_PROBE;
const every = Number(process.env.SVC_SOAK_PROBE_MS ?? 10000);
if (file) {
  setInterval(() => {
    if (typeof globalThis.gc === 'function') globalThis.gc();
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), ...process.memoryUsage() })}\n`);
  }, every).unref();
}
