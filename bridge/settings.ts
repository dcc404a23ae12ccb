/**
 * Settings by environment (how the bridge is run):
 *
 *   SVC_API       relay address (default http://127.0.0.1:8787). A token goes only over HTTPS
 *                 or to a loopback address (spec/1-concepts.md "Tokens" 2); anything else is
 *                 refused at start.
 *   SVC_HOME      key directory (default ~/.svc)
 *   SVC_KEY       which KEY, when the directory holds several
 *   SVC_TOKEN     use this token instead of minting
 *   SVC_KEYCHAIN  1: keep KEY seeds in the OS keychain when its native module is available
 *   SVC_UNSIGNED  1: post unsigned (origin-attested) where the SPACE allows it; a signed-only
 *                 SPACE still gets signed posts (the only exception to the bridge signing every
 *                 post; spec/1-concepts.md "Signed posts")
 *   SVC_WITNESSES name=base64key,... : witnesses whose cosignatures of a SPACE's checkpoint
 *                 the bridge needs before it calls the history verified (tools/verify/witnesses.ts)
 *   SVC_WITNESSES_REQUIRED  how many of them (default 1 when SVC_WITNESSES names any)
 *   SVC_TOOLS     the toolsets to list (tools/toolsets.ts): memory, messages, tasks, research,
 *                 coordinate or all (the default), several comma-separated; an unknown name is
 *                 refused at start, as any unusable setting is
 */
import { isIP } from 'node:net';
import { BridgeError } from '../tools/errors.js';
import { envSetting, keyHome } from './keys/keys.js';
import { TOKEN_RE } from './keys/token-file.js';
import { readCosignerList } from '../shared/signed-note.js';
import { parseToolsets, unknownSetsText, type Toolset } from '../tools/toolsets.js';
import type { WitnessPolicy } from '../tools/verify/witnesses.js';

export const DEFAULT_API = 'http://127.0.0.1:8787';

export interface Settings {
  /** The relay's base address (origin plus optional path prefix, no trailing slash). */
  readonly api: URL;
  readonly home: string;
  readonly keyName: string | undefined;
  readonly token: string | undefined;
  readonly keychain: boolean;
  readonly unsigned: boolean;
  /** SVC_WITNESSES and SVC_WITNESSES_REQUIRED; undefined when no witness is named. */
  readonly witnesses?: WitnessPolicy | undefined;
  /** SVC_TOOLS: the tools the server lists. */
  readonly toolset: Toolset;
}

/** SVC_TOOLS, checked: set names the bridge knows. */
export function readToolset(env: NodeJS.ProcessEnv): Toolset {
  const parsed = parseToolsets(env.SVC_TOOLS);
  if ('unknown' in parsed) {
    throw new BridgeError('CONFIG', `SVC_TOOLS: ${unknownSetsText(parsed.unknown, true)}`, 'Set SVC_TOOLS to one of those sets (or several, comma-separated), or unset it for every tool.');
  }
  return parsed.toolset;
}

/** SVC_WITNESSES and SVC_WITNESSES_REQUIRED, checked: a list, and how many of it must have cosigned. */
export function readWitnessPolicy(env: NodeJS.ProcessEnv): WitnessPolicy | undefined {
  const fix = 'Set SVC_WITNESSES to name=base64key,... as each witness shows at its /v1/witness (setting), and SVC_WITNESSES_REQUIRED to how many of them must have cosigned.';
  let witnesses;
  try {
    witnesses = readCosignerList(env.SVC_WITNESSES ?? '', 'SVC_WITNESSES');
  } catch (e) {
    throw new BridgeError('CONFIG', (e as Error).message, fix);
  }
  const requiredText = env.SVC_WITNESSES_REQUIRED ?? '';
  if (witnesses.length === 0) {
    if (requiredText !== '' && requiredText !== '0') throw new BridgeError('CONFIG', 'SVC_WITNESSES_REQUIRED is set but SVC_WITNESSES names no witness', fix);
    return undefined;
  }
  const required = requiredText === '' ? 1 : /^\d{1,3}$/.test(requiredText) ? Number(requiredText) : NaN;
  if (!Number.isInteger(required) || required < 1 || required > witnesses.length) {
    throw new BridgeError('CONFIG', `SVC_WITNESSES_REQUIRED must be a whole number from 1 to ${witnesses.length} (the witnesses named), not ${JSON.stringify(requiredText)}`, fix);
  }
  return { witnesses, required };
}

/** True for `localhost`, 127.0.0.0/8 and ::1: addresses that never leave the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1';
  return false;
}

/** Read and check SVC_API: absolute http(s), no credentials, query or fragment; http only to loopback. */
export function checkApi(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BridgeError('CONFIG', `SVC_API is not an absolute URL: ${JSON.stringify(text)}`, 'Set SVC_API to the relay address, e.g. https://relay.example.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new BridgeError('CONFIG', `SVC_API must start with https:// (or http:// for a relay on this machine), not ${url.protocol}`, 'Set SVC_API to the relay address, e.g. https://relay.example.');
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new BridgeError('CONFIG', 'SVC_API must not carry credentials, a query or a fragment', 'Set SVC_API to the bare relay address.');
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new BridgeError(
      'INSECURE_API',
      `SVC_API ${url.origin} is plain http to a host that is not this machine: the token would travel in clear text`,
      'Use the https:// address of the relay (http:// is accepted only for localhost, 127.0.0.0/8 and [::1]).',
    );
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const api = checkApi(envSetting(env, 'SVC_API') ?? DEFAULT_API);
  const token = env.SVC_TOKEN !== undefined && env.SVC_TOKEN !== '' ? env.SVC_TOKEN : undefined;
  if (token !== undefined && !TOKEN_RE.test(token)) {
    throw new BridgeError('CONFIG', 'SVC_TOKEN is not a token (svc_ followed by 64 lowercase hex)', 'Unset SVC_TOKEN to let the bridge mint one, or paste the whole token.');
  }
  const keychain = env.SVC_KEYCHAIN ?? '';
  if (!['', '0', '1'].includes(keychain)) {
    throw new BridgeError('CONFIG', `SVC_KEYCHAIN must be 1 or 0, not ${JSON.stringify(keychain)}`, 'Set SVC_KEYCHAIN=1 to use the OS keychain, or unset it.');
  }
  const unsigned = env.SVC_UNSIGNED ?? '';
  if (!['', '0', '1'].includes(unsigned)) {
    throw new BridgeError('CONFIG', `SVC_UNSIGNED must be 1 or 0, not ${JSON.stringify(unsigned)}`, 'Set SVC_UNSIGNED=1 to post unsigned where a SPACE allows it, or unset it.');
  }
  return {
    api,
    home: keyHome(env),
    keyName: env.SVC_KEY !== undefined && env.SVC_KEY !== '' ? env.SVC_KEY : undefined,
    token,
    keychain: keychain === '1',
    unsigned: unsigned === '1',
    witnesses: readWitnessPolicy(env),
    toolset: readToolset(env),
  };
}
