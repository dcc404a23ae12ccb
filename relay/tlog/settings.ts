/**
 * The command line's witness settings (cli.ts), kept together with their environment variables
 * and help:
 *
 * - `--accept-witnesses name=base64key,...` (env SVC_ACCEPT_WITNESSES): as an origin, the
 *   witnesses whose cosignatures this relay takes and serves on its SPACE checkpoints.
 * - `--witness` with `--witness-of URL` (repeatable; env SVC_WITNESS_OF, comma separated): as a
 *   witness, the SPACES of other relays to follow, each by its address
 *   `https://relay.example/v1/spaces/NAME`; `--witness-interval SECONDS` (default 60).
 */
import { readCosignerList } from '../../shared/signed-note.js';
import type { RelayConfig } from '../config.js';

export const DEFAULT_WITNESS_INTERVAL_SECONDS = 60;

export const WITNESS_OPTIONS = {
  'accept-witnesses': { type: 'string' },
  witness: { type: 'boolean', default: false },
  'witness-of': { type: 'string', multiple: true },
  'witness-interval': { type: 'string' },
} as const;

export const WITNESS_HELP = `  --accept-witnesses LIST
                    witnesses whose cosignatures of this relay's SPACE checkpoints are kept and
                    served on /v1/spaces/NAME/checkpoint.note: name=base64key,... as each witness
                    shows at its /v1/witness (env SVC_ACCEPT_WITNESSES)
  --witness         act as a witness for SPACES on other relays: fetch their checkpoint notes,
                    check each is consistent with the last one seen, cosign, post it back
  --witness-of URL  a SPACE to witness, e.g. https://relay-a.example/v1/spaces/NAME; repeatable
                    (env SVC_WITNESS_OF, comma separated)
  --witness-interval SECONDS
                    how often each SPACE is checked (default ${DEFAULT_WITNESS_INTERVAL_SECONDS}; env SVC_WITNESS_INTERVAL)
`;

/** A SPACE's address on another relay: http(s), a path ending in /v1/spaces/NAME. */
export function checkWitnessTarget(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--witness-of: not a URL: ${text}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new Error(`--witness-of: an http(s) address with no query, fragment or credentials: ${text}`);
  }
  if (!/\/v1\/spaces\/[^/]+$/.test(url.pathname)) throw new Error(`--witness-of: the address of a SPACE, ending in /v1/spaces/NAME: ${text}`);
  return url.href;
}

type Values = { 'accept-witnesses'?: string; witness?: boolean; 'witness-of'?: string[]; 'witness-interval'?: string };

/** The witness part of RelayConfig from flags and environment; throws a one-line Error. */
export function parseWitnessSettings(values: Values, env: NodeJS.ProcessEnv): Pick<RelayConfig, 'acceptedWitnesses' | 'witness'> {
  const accepted = values['accept-witnesses'] ?? env.SVC_ACCEPT_WITNESSES;
  const acceptedWitnesses = accepted === undefined ? undefined : readCosignerList(accepted, '--accept-witnesses');
  const targets = (values['witness-of'] ?? env.SVC_WITNESS_OF?.split(',') ?? []).map((t) => t.trim()).filter((t) => t !== '');
  const on = values.witness === true || env.SVC_WITNESS === '1';
  if (!on) {
    if (targets.length > 0) throw new Error('--witness-of needs --witness');
    return { acceptedWitnesses };
  }
  if (targets.length === 0) throw new Error('--witness needs at least one --witness-of URL');
  const intervalText = values['witness-interval'] ?? env.SVC_WITNESS_INTERVAL ?? String(DEFAULT_WITNESS_INTERVAL_SECONDS);
  if (!/^\d{1,6}$/.test(intervalText) || Number(intervalText) < 1) throw new Error(`--witness-interval: whole seconds, at least 1: ${intervalText}`);
  return { acceptedWitnesses, witness: { targets: [...new Set(targets.map(checkWitnessTarget))], intervalMs: Number(intervalText) * 1000 } };
}
