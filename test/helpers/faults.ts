/**
 * Faults of the machine under a relay, made real: a small tmpfs that fills up (mounting needs
 * root; without it the tests that need one skip, saying why), files made immutable with chattr
 * (even open descriptors then refuse writes), and the traffic the fault tests send: appends
 * that remember every post the relay acknowledged, so each can be looked for after a restart.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Tmpfs {
  dir: string;
  unmount(): void;
}

/** Mount a tmpfs of `size` (e.g. "2m") on a fresh directory; the reason when that cannot be done. */
export function mountTmpfs(size: string): Tmpfs | { reason: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    const why = (e as { stderr?: Buffer }).stderr?.toString().trim() || String(e);
    return { reason: `cannot mount a tmpfs here (root is needed): ${why}` };
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether chattr +i works on files in `dir` (root on a file system with the immutable flag). */
export function immutableFlagWorks(dir: string): { ok: true } | { ok: false; reason: string } {
  const probe = join(dir, 'chattr-probe');
  try {
    execFileSync('touch', [probe]);
    execFileSync('chattr', ['+i', probe], { stdio: 'pipe' });
    execFileSync('chattr', ['-i', probe], { stdio: 'pipe' });
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: `chattr +i does not work here (root on ext4 or similar is needed): ${String(e).slice(0, 120)}` };
  } finally {
    rmSync(probe, { force: true });
  }
}

export function setImmutable(files: readonly string[], on: boolean): void {
  execFileSync('chattr', [on ? '+i' : '-i', ...files], { stdio: 'pipe' });
}

export interface Acked {
  postId: string;
  seq: string;
  body: string;
}

export interface Answered {
  status: number;
  text: string;
  retryAfter: string | null;
}

/** Append one post; the answer, and the post when it was acknowledged (201). */
export async function append(url: string, token: string, space: string, body: string): Promise<{ answer: Answered; acked?: Acked }> {
  const res = await fetch(`${url}/v1/spaces/${space}/posts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'obs', body }),
  });
  const text = await res.text();
  const answer = { status: res.status, text, retryAfter: res.headers.get('retry-after') };
  if (res.status !== 201) return { answer };
  const j = JSON.parse(text) as { post_id: string; seq: string };
  return { answer, acked: { postId: j.post_id, seq: j.seq, body } };
}

/** The posts of `space` as the relay serves them now, by id. */
export async function postsById(url: string, token: string, space: string): Promise<Map<string, { seq: string; body: string }>> {
  const out = new Map<string, { seq: string; body: string }>();
  let after = '0';
  for (;;) {
    const res = await fetch(`${url}/v1/spaces/${space}/posts?after=${after}&limit=200`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`posts.read answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { items: { post_id: string; seq: string; body: string }[] };
    if (page.items.length === 0) return out;
    for (const p of page.items) out.set(p.post_id, { seq: p.seq, body: p.body });
    after = page.items[page.items.length - 1]!.seq;
  }
}
