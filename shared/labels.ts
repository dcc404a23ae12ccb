/**
 * Every label of protocol version 1 (protocol/labels.md) and the labelled hash.
 *
 *   L(name) = UTF-8("agent-state:" + name + ":v1") || 0x00
 *   labelled hash = SHA-256(L(name) || parts...)
 *
 * This is the only module that spells a label string; test/shared/labels.test.ts fails if one
 * appears anywhere else in the source.
 */
import { sha256 } from './hash.js';
import { utf8 } from './encoding.js';

/** Every label the protocol uses, by name. */
export const LABEL_NAMES = [
  // identity and sign-in
  'agent',
  'passkey',
  'token-challenge',
  'passkey-challenge',
  // posts
  'object',
  'object-private',
  'object-signature',
  'object-genesis',
  'object-admission',
  'object-chain',
  // governance log
  'control',
  'control-genesis',
  'control-chain',
  // what the service signs
  'checkpoint',
  'checkpoint-signature',
  'checkpoint-object',
  'checkpoint-control',
  'service-key',
  'service-certificate',
  'service-certificate-signature',
  'receipt',
  'receipt-signature',
  'recovery',
  'recovery-signature',
  // sealed conversations and SPACES
  'encryption-key',
  'encryption-key-seed',
  'passkey-prf',
  'sealed-header',
  'sealed-ciphertext',
  'sealed-item',
  'sealed-lock',
  'sealed-chain',
  'sealed-commitment',
  'sealed-keepers',
  'sealed-stamp',
] as const;

export type LabelName = (typeof LABEL_NAMES)[number];

/** Reserved and never to be used (labels.md "Reserved, never to be used for anything"). */
export const RESERVED_LABEL_NAMES = [
  'control-signature',
  'artifact-manifest',
  'summary-coverage',
  'key-succession',
  'key-delegation',
  'key-delegation-signature',
  'recovery-designation',
  'ownership-transfer',
] as const;

/** The label text, without the trailing NUL. */
export function labelText(name: LabelName): string {
  return `agent-state:${name}:v1`;
}

const LABEL_BYTES = new Map<LabelName, Uint8Array>(
  LABEL_NAMES.map((name) => [name, utf8(`${labelText(name)}\0`)]),
);

/** The stored L(name); a reserved or unknown name (possible through a cast) is refused. */
function labelBytes(name: LabelName): Uint8Array {
  const bytes = LABEL_BYTES.get(name);
  if (bytes === undefined) throw new RangeError(`not a label of protocol version 1: ${String(name)}`);
  return bytes;
}

/** L(name): the label text followed by one zero byte (a fresh copy the caller may keep). */
export function label(name: LabelName): Uint8Array {
  return labelBytes(name).slice();
}

/** SHA-256(L(name) || parts...). */
export function labelledHash(name: LabelName, ...parts: Uint8Array[]): Uint8Array {
  return sha256(labelBytes(name), ...parts);
}

/** The keys of `protocol.labels` in the capability document, each with its label text. */
export function capabilityLabels(): Record<string, string> {
  const keys: LabelName[] = [
    'object',
    'object-private',
    'object-signature',
    'object-genesis',
    'object-admission',
    'object-chain',
    'control',
    'control-genesis',
    'control-chain',
    'checkpoint',
    'checkpoint-signature',
    'checkpoint-object',
    'checkpoint-control',
    'service-key',
    'service-certificate',
    'service-certificate-signature',
    'receipt',
    'receipt-signature',
    'recovery',
    'recovery-signature',
  ];
  return Object.fromEntries(keys.map((k) => [k.replaceAll('-', '_'), labelText(k)]));
}
