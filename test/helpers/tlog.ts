/**
 * Helpers for the transparency-log tests: run the independent Python checker
 * (test/helpers/tlog_check.py: standard library plus `cryptography`), read a SPACE's posts with
 * their chain hashes, and sign checkpoints by moving the relay's clock.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunningRelay } from './relay.js';
import { call } from './relay.js';

const SCRIPT = fileURLToPath(new URL('./tlog_check.py', import.meta.url));

/** Whether python3 with `cryptography` is here (the Python checks skip with the reason otherwise). */
export const HAVE_PYTHON_CRYPTOGRAPHY: boolean = (() => {
  try {
    execFileSync('python3', ['-c', 'import cryptography'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Run the Python checker on one request (see its docstring) and answer what it found. */
export function pythonCheck(request: Record<string, unknown>): any {
  const out = execFileSync('python3', [SCRIPT], { input: JSON.stringify(request), encoding: 'utf8' });
  return JSON.parse(out);
}

/** Every post of a SPACE with seq, object_id and chain_hash, oldest first (posts.read at full detail with proofs). */
export async function postLinks(relay: RunningRelay, name: string, token?: string): Promise<{ seq: string; object_id: string; chain_hash: string }[]> {
  const out: { seq: string; object_id: string; chain_hash: string }[] = [];
  let after = '0';
  for (;;) {
    relay.clock.advance(600);
    const r = await call(relay, 'GET', `/v1/spaces/${name}/posts?after=${after}&limit=200&detail=full&proof=true`, { token });
    if (r.status !== 200) throw new Error(`posts.read: ${r.status} ${r.text}`);
    for (const p of r.body.items) out.push({ seq: p.seq, object_id: p.object_id, chain_hash: p.proof.chain.chain_hash });
    if (!r.body.has_more) return out;
    after = r.body.next_after;
  }
}

/** Sign every range due: move the clock past the ten-minute age and run the checkpointer. */
export async function signCheckpoints(relay: RunningRelay): Promise<void> {
  relay.clock.advance(11 * 60_000);
  await relay.app.checkpointer.runOnce(relay.clock.now());
}

/** The note key of a relay: its audience host and online service key (base64). */
export function noteKeyOf(relay: RunningRelay): { name: string; public_key_b64: string } {
  return { name: new URL(relay.url).host, public_key_b64: Buffer.from(relay.serviceKeys.signer.publicKey).toString('base64') };
}
