/**
 * Loopback ports that stay a test's own while the suite runs in several workers at once.
 *
 * A port a test takes with `listen(0)` comes from the system's ephemeral range, the same range
 * every other `listen(0)` and every outgoing connection of every process draws from. Once the
 * test lets it go (a relay stopped to be started again at the same address, a port closed to
 * be a relay nobody answers at), another worker's relay or client may take it meanwhile: the
 * restart then fails with EADDRINUSE, or a bridge talks to a relay that is not its own.
 *
 * `stablePort()` gives a port below the ephemeral range instead, where nothing takes a port by
 * itself, from a band of its own for each vitest worker (VITEST_POOL_ID), checked free when it
 * is given. Until the test listens on it again, connections to it are refused.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port of the system's ephemeral range (Linux's own setting; its default elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 20_000) return low;
  } catch {
    // Not Linux: IANA's dynamic range starts at 49152, Linux's default at 32768; take the lower.
  }
  return 32_768;
}

const FIRST = 15_000;
const BANDS = 16;

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A free loopback port below the ephemeral range, in this worker's band. */
export async function stablePort(): Promise<number> {
  const band = Math.floor((ephemeralLow() - FIRST) / BANDS);
  const worker = Number(process.env.VITEST_POOL_ID ?? 1) % BANDS;
  const start = FIRST + worker * band;
  for (let i = 0; i < 50; i++) {
    const port = start + Math.floor(Math.random() * band);
    if (await free(port)) return port;
  }
  throw new Error(`no free port in ${start}..${start + band - 1}`);
}
