/**
 * What the bridge remembers about sealed SPACES (protocol/sealed.md §5 member-side rules, §6
 * back links, §9 changing the key): `<SVC_HOME>/cache/<key>.sealed.sqlite`, SQLite in WAL mode,
 * mode 0600, apart from bridge/cache/cache-file.ts so its schema steps stay its own.
 *
 * Per relay and SPACE id (a SPACE's uuid, which its container bytes name; names can move):
 * - the owner seen, the owner it took over from and the generation then (hand-over rule), the
 *   generation in use seen and its commitment, the newest keeper list revision, its bytes and
 *   signer, and whether this KEY created the SPACE (it never meets it "for the first time");
 *   generation and revision only move forward, in one SQL statement, so two bridges of one KEY
 *   racing cannot move them back;
 * - every keeper list seen (a new owner is accepted through a list the previous owner signed);
 * - owner history (who owned it, when seen, from which generation);
 * - the KEYS whose vouching this KEY ended when it removed them (bridge/sealed/keeping.ts
 *   `endVouching`): a stamp without end it signed for such a KEY before, put again, is not
 *   counted by this KEY's keeper passes until it vouches for that KEY anew;
 * - generation secrets, each under its commitment. Secrets at rest are sealed with the KEY's
 *   local box (bridge/keys/local-box.ts `LocalBox`: AES-256-GCM under a key derived from the KEY seed,
 *   associated data naming relay, SPACE, generation and commitment), so the file alone opens
 *   nothing and a value moved to another row does not open either.
 *
 * Several bridges of one KEY share the file: every change is one statement or one immediate
 * transaction, and the busy timeout makes a writer wait.
 */
import { join } from 'node:path';
import { isHex, isUuid, utf8 } from '../../shared/encoding.js';
import { BridgeError } from '../../tools/errors.js';
import { ownerOnlySqliteFile } from '../cache/cache-file.js';
import { checkKeyName, type KeyDirectory } from '../keys/keys.js';
import type { LocalBox } from '../keys/local-box.js';
import { closer, immediate, migrate, openSqliteFile, statement, type DatabaseSync, type SQLInputValue } from '../cache/sqlite.js';

export interface RememberedSpace {
  readonly relay: string;
  readonly spaceId: string;
  readonly name: string;
  /** The owner this bridge accepts (peer id). */
  readonly owner: string;
  /** The owner the present one took over from, when a hand-over was seen. */
  readonly ownerWas: string | null;
  /** The generation in use when this KEY took the SPACE over (sealed.md §4 exception). */
  readonly handOverGeneration: number | null;
  /** The newest generation in use seen, and its commitment (64 hex). */
  readonly generation: number;
  readonly commitment: string;
  /** The newest keeper list seen: revision, bytes and signer; null when none yet. */
  readonly listRevision: number | null;
  readonly list: Uint8Array | null;
  readonly listSignedBy: string | null;
  readonly createdHere: boolean;
  readonly firstSeenAt: number;
  readonly updatedAt: number;
}

export type SecretSource = 'created' | 'lock' | 'chain' | 'staged';

export interface KeptSecret {
  readonly generation: number;
  readonly commitment: string;
  readonly secret: Uint8Array;
  readonly source: SecretSource;
}

export interface SeenList {
  readonly revision: number;
  readonly list: Uint8Array;
  readonly envelope: string;
  readonly signedBy: string;
}

export interface OwnerSeen {
  readonly owner: string;
  readonly ownerWas: string | null;
  readonly generation: number;
  readonly seenAt: number;
}

export interface SealedCache {
  readonly path: string;
  space(relay: string, spaceId: string): RememberedSpace | undefined;
  /** The SPACE last remembered under `name` at `relay` (names can be reused: compare ids). */
  spaceByName(relay: string, name: string): RememberedSpace | undefined;
  /** Every SPACE remembered at `relay`, by name. */
  spaces(relay: string): RememberedSpace[];
  /**
   * Insert or update the memory of a SPACE. Generation (with its commitment) and list revision
   * (with its bytes and signer) never move back, whatever is passed.
   */
  remember(s: RememberedSpace): void;
  keepSecret(relay: string, spaceId: string, k: Omit<KeptSecret, never>, now: number): void;
  /** The secret of `generation` (under `commitment` when given). */
  secret(relay: string, spaceId: string, generation: number, commitment?: string): KeptSecret | undefined;
  /** Kept secrets of generations >= `atLeast`, oldest first. */
  secretsFrom(relay: string, spaceId: string, atLeast: number): KeptSecret[];
  dropSecret(relay: string, spaceId: string, generation: number, commitment: string): void;
  noteList(relay: string, spaceId: string, l: SeenList, now: number): void;
  /** Keeper lists seen that `signer` signed, newest first. */
  listsSignedBy(relay: string, spaceId: string, signer: string): SeenList[];
  noteOwner(relay: string, spaceId: string, o: OwnerSeen): void;
  owners(relay: string, spaceId: string): OwnerSeen[];
  /** Remember that this KEY ended its vouching for `peer` in a SPACE, at `at` (ms). */
  noteVouchingEnded(relay: string, spaceId: string, peer: string, at: number): void;
  /** When this KEY ended its vouching for `peer` in a SPACE (ms), unless it vouched anew since. */
  vouchingEnded(relay: string, spaceId: string, peer: string): number | undefined;
  /** This KEY vouches for `peer` anew: in one SPACE, or in every SPACE at `relay` when no id is given. */
  clearVouchingEnded(relay: string, peer: string, spaceId?: string): void;
  /** Clear what is remembered about a SPACE (after its person compared fingerprints outside the service). */
  forget(relay: string, spaceId: string): void;
  close(): void;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sealed_spaces (
     relay TEXT NOT NULL,
     space_id TEXT NOT NULL,
     name TEXT NOT NULL,
     owner TEXT NOT NULL CHECK (length(owner) = 64),
     owner_was TEXT,
     hand_over_generation INTEGER,
     generation INTEGER NOT NULL CHECK (generation >= 1),
     commitment TEXT NOT NULL CHECK (length(commitment) = 64),
     list_revision INTEGER,
     list BLOB,
     list_signed_by TEXT,
     created_here INTEGER NOT NULL,
     first_seen_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space_id)
   ) STRICT;
   CREATE INDEX sealed_spaces_by_name ON sealed_spaces (relay, name, updated_at);
   CREATE TABLE sealed_secrets (
     relay TEXT NOT NULL,
     space_id TEXT NOT NULL,
     generation INTEGER NOT NULL,
     commitment TEXT NOT NULL CHECK (length(commitment) = 64),
     sealed BLOB NOT NULL,
     source TEXT NOT NULL CHECK (source IN ('created', 'lock', 'chain', 'staged')),
     kept_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space_id, generation, commitment)
   ) STRICT;
   CREATE TABLE sealed_lists (
     relay TEXT NOT NULL,
     space_id TEXT NOT NULL,
     revision INTEGER NOT NULL,
     list BLOB NOT NULL,
     envelope TEXT NOT NULL,
     signed_by TEXT NOT NULL,
     seen_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space_id, revision, signed_by)
   ) STRICT;
   CREATE TABLE sealed_owners (
     relay TEXT NOT NULL,
     space_id TEXT NOT NULL,
     owner TEXT NOT NULL,
     owner_was TEXT,
     generation INTEGER NOT NULL,
     seen_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space_id, owner)
   ) STRICT;`,
  `CREATE TABLE sealed_vouching_ended (
     relay TEXT NOT NULL,
     space_id TEXT NOT NULL,
     peer_id TEXT NOT NULL CHECK (length(peer_id) = 64),
     ended_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space_id, peer_id)
   ) STRICT;`,
];

interface SpaceRow {
  relay: string;
  space_id: string;
  name: string;
  owner: string;
  owner_was: string | null;
  hand_over_generation: number | null;
  generation: number;
  commitment: string;
  list_revision: number | null;
  list: Uint8Array | null;
  list_signed_by: string | null;
  created_here: number;
  first_seen_at: number;
  updated_at: number;
}

function spaceOf(r: SpaceRow | undefined): RememberedSpace | undefined {
  if (r === undefined) return undefined;
  return {
    relay: r.relay,
    spaceId: r.space_id,
    name: r.name,
    owner: r.owner,
    ownerWas: r.owner_was,
    handOverGeneration: r.hand_over_generation,
    generation: r.generation,
    commitment: r.commitment,
    listRevision: r.list_revision,
    list: r.list === null ? null : new Uint8Array(r.list),
    listSignedBy: r.list_signed_by,
    createdHere: r.created_here === 1,
    firstSeenAt: r.first_seen_at,
    updatedAt: r.updated_at,
  };
}

function secretAad(relay: string, spaceId: string, generation: number, commitment: string): Uint8Array {
  return utf8(`svc bridge sealed secret\n${relay}\n${spaceId}\n${generation}\n${commitment}`);
}

function checkIds(spaceId: string, generation?: number, commitment?: string): void {
  if (!isUuid(spaceId)) throw new TypeError('spaceId: expected a lowercase uuid');
  if (generation !== undefined && (!Number.isSafeInteger(generation) || generation < 1)) throw new TypeError('generation: an integer >= 1');
  if (commitment !== undefined && !isHex(commitment, 32)) throw new TypeError('commitment: expected 64 lowercase hex');
}

export function sealedCachePath(dir: KeyDirectory, keyName: string): string {
  return join(dir.cacheDir, `${checkKeyName(keyName)}.sealed.sqlite`);
}

/** The sealed cache beside bridge/cache/cache-file.ts's file (`<key>.sqlite` → `<key>.sealed.sqlite`). */
export function sealedCachePathBeside(cachePath: string): string {
  return cachePath.replace(/\.sqlite$/, '') + '.sealed.sqlite';
}

/** Open (and make, mode 0600) the sealed cache at `path`; secrets go through `box`. */
export function openSealedCache(path: string, box: LocalBox): SealedCache {
  let db: DatabaseSync;
  try {
    ownerOnlySqliteFile(path);
    db = openSqliteFile(path);
    migrate(db, MIGRATIONS);
  } catch (e) {
    throw new BridgeError(
      'KEY_FILE',
      `cannot open the sealed cache ${path}: ${(e as Error).message}`,
      'Check the key directory. Deleting the file forgets what this bridge saw of sealed SPACES (owners, keeper lists, generations) and the secrets it opened; locks at the relay give the current key back.',
      undefined,
      { cause: e },
    );
  }

  const selSpace = statement<[string, string], SpaceRow>(db, 'SELECT * FROM sealed_spaces WHERE relay = ? AND space_id = ?');
  const selByName = statement<[string, string], SpaceRow>(db, 'SELECT * FROM sealed_spaces WHERE relay = ? AND name = ? ORDER BY updated_at DESC LIMIT 1');
  const selAll = statement<[string], SpaceRow>(db, 'SELECT * FROM sealed_spaces WHERE relay = ? ORDER BY name, updated_at DESC');
  // Generation and list revision only move forward, each with the values that go with it.
  const upSpace = statement<[Record<string, SQLInputValue>]>(
    db,
    `INSERT INTO sealed_spaces (relay, space_id, name, owner, owner_was, hand_over_generation, generation, commitment,
       list_revision, list, list_signed_by, created_here, first_seen_at, updated_at)
     VALUES (@relay, @space_id, @name, @owner, @owner_was, @hand_over_generation, @generation, @commitment,
       @list_revision, @list, @list_signed_by, @created_here, @first_seen_at, @updated_at)
     ON CONFLICT (relay, space_id) DO UPDATE SET
       name = excluded.name,
       owner = excluded.owner,
       owner_was = excluded.owner_was,
       hand_over_generation = excluded.hand_over_generation,
       commitment = CASE WHEN excluded.generation >= sealed_spaces.generation THEN excluded.commitment ELSE sealed_spaces.commitment END,
       generation = MAX(sealed_spaces.generation, excluded.generation),
       list = CASE WHEN excluded.list_revision >= coalesce(sealed_spaces.list_revision, 0) THEN excluded.list ELSE sealed_spaces.list END,
       list_signed_by = CASE WHEN excluded.list_revision >= coalesce(sealed_spaces.list_revision, 0) THEN excluded.list_signed_by ELSE sealed_spaces.list_signed_by END,
       list_revision = CASE WHEN excluded.list_revision >= coalesce(sealed_spaces.list_revision, 0) THEN excluded.list_revision ELSE sealed_spaces.list_revision END,
       created_here = MAX(sealed_spaces.created_here, excluded.created_here),
       updated_at = excluded.updated_at`,
  );
  const insSecret = statement<[string, string, number, string, Uint8Array, string, number]>(
    db,
    'INSERT OR IGNORE INTO sealed_secrets (relay, space_id, generation, commitment, sealed, source, kept_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const selSecret = statement<[string, string, number], { generation: number; commitment: string; sealed: Uint8Array; source: SecretSource }>(
    db,
    'SELECT generation, commitment, sealed, source FROM sealed_secrets WHERE relay = ? AND space_id = ? AND generation = ? ORDER BY kept_at DESC',
  );
  const selSecretsFrom = statement<[string, string, number], { generation: number; commitment: string; sealed: Uint8Array; source: SecretSource }>(
    db,
    'SELECT generation, commitment, sealed, source FROM sealed_secrets WHERE relay = ? AND space_id = ? AND generation >= ? ORDER BY generation, kept_at',
  );
  const delSecret = statement<[string, string, number, string]>(db, 'DELETE FROM sealed_secrets WHERE relay = ? AND space_id = ? AND generation = ? AND commitment = ?');
  const insList = statement<[string, string, number, Uint8Array, string, string, number]>(
    db,
    'INSERT OR IGNORE INTO sealed_lists (relay, space_id, revision, list, envelope, signed_by, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const selLists = statement<[string, string, string], { revision: number; list: Uint8Array; envelope: string; signed_by: string }>(
    db,
    'SELECT revision, list, envelope, signed_by FROM sealed_lists WHERE relay = ? AND space_id = ? AND signed_by = ? ORDER BY revision DESC',
  );
  const insOwner = statement<[string, string, string, string | null, number, number]>(
    db,
    'INSERT OR IGNORE INTO sealed_owners (relay, space_id, owner, owner_was, generation, seen_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const selOwners = statement<[string, string], { owner: string; owner_was: string | null; generation: number; seen_at: number }>(
    db,
    'SELECT owner, owner_was, generation, seen_at FROM sealed_owners WHERE relay = ? AND space_id = ? ORDER BY seen_at, generation',
  );
  const upEnded = statement<[string, string, string, number]>(
    db,
    `INSERT INTO sealed_vouching_ended (relay, space_id, peer_id, ended_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (relay, space_id, peer_id) DO UPDATE SET ended_at = excluded.ended_at`,
  );
  const selEnded = statement<[string, string, string], { ended_at: number }>(db, 'SELECT ended_at FROM sealed_vouching_ended WHERE relay = ? AND space_id = ? AND peer_id = ?');
  const delEnded = statement<[string, string, string]>(db, 'DELETE FROM sealed_vouching_ended WHERE relay = ? AND space_id = ? AND peer_id = ?');
  const delEndedEverywhere = statement<[string, string]>(db, 'DELETE FROM sealed_vouching_ended WHERE relay = ? AND peer_id = ?');
  const forgetSpace = ['sealed_spaces', 'sealed_secrets', 'sealed_lists', 'sealed_owners', 'sealed_vouching_ended'].map((table) =>
    statement<[string, string]>(db, `DELETE FROM ${table} WHERE relay = ? AND space_id = ?`),
  );

  function openSecret(relay: string, spaceId: string, r: { generation: number; commitment: string; sealed: Uint8Array; source: SecretSource }): KeptSecret | undefined {
    const secret = box.open(new Uint8Array(r.sealed), secretAad(relay, spaceId, r.generation, r.commitment));
    // A value that does not open under this KEY (another KEY's file, or moved bytes) is not a secret.
    if (secret === undefined || secret.length !== 32) return undefined;
    return { generation: r.generation, commitment: r.commitment, secret, source: r.source };
  }

  return {
    path,
    space: (relay, spaceId) => spaceOf(selSpace.get(relay, spaceId)),
    spaceByName: (relay, name) => spaceOf(selByName.get(relay, name)),
    spaces: (relay) => selAll.all(relay).map((r) => spaceOf(r)!),
    remember(s) {
      checkIds(s.spaceId, s.generation, s.commitment);
      upSpace.run({
        relay: s.relay,
        space_id: s.spaceId,
        name: s.name,
        owner: s.owner,
        owner_was: s.ownerWas,
        hand_over_generation: s.handOverGeneration,
        generation: s.generation,
        commitment: s.commitment,
        list_revision: s.listRevision,
        list: s.list,
        list_signed_by: s.listSignedBy,
        created_here: s.createdHere ? 1 : 0,
        first_seen_at: s.firstSeenAt,
        updated_at: s.updatedAt,
      });
    },
    keepSecret(relay, spaceId, k, now) {
      checkIds(spaceId, k.generation, k.commitment);
      if (!(k.secret instanceof Uint8Array) || k.secret.length !== 32) throw new TypeError('secret must be 32 bytes');
      const sealed = box.seal(k.secret, secretAad(relay, spaceId, k.generation, k.commitment));
      insSecret.run(relay, spaceId, k.generation, k.commitment, sealed, k.source, now);
    },
    secret(relay, spaceId, generation, commitment) {
      for (const r of selSecret.all(relay, spaceId, generation)) {
        if (commitment !== undefined && r.commitment !== commitment) continue;
        const kept = openSecret(relay, spaceId, r);
        if (kept !== undefined) return kept;
      }
      return undefined;
    },
    secretsFrom(relay, spaceId, atLeast) {
      const out: KeptSecret[] = [];
      for (const r of selSecretsFrom.all(relay, spaceId, atLeast)) {
        const kept = openSecret(relay, spaceId, r);
        if (kept !== undefined) out.push(kept);
      }
      return out;
    },
    dropSecret: (relay, spaceId, generation, commitment) => void delSecret.run(relay, spaceId, generation, commitment),
    noteList(relay, spaceId, l, now) {
      checkIds(spaceId);
      insList.run(relay, spaceId, l.revision, l.list, l.envelope, l.signedBy, now);
    },
    listsSignedBy: (relay, spaceId, signer) =>
      selLists.all(relay, spaceId, signer).map((r) => ({ revision: r.revision, list: new Uint8Array(r.list), envelope: r.envelope, signedBy: r.signed_by })),
    noteOwner: (relay, spaceId, o) => void insOwner.run(relay, spaceId, o.owner, o.ownerWas, o.generation, o.seenAt),
    owners: (relay, spaceId) =>
      selOwners.all(relay, spaceId).map((r) => ({ owner: r.owner, ownerWas: r.owner_was, generation: r.generation, seenAt: r.seen_at })),
    noteVouchingEnded(relay, spaceId, peer, at) {
      checkIds(spaceId);
      if (!isHex(peer, 32)) throw new TypeError('peer: expected a peer id, 64 lowercase hex');
      upEnded.run(relay, spaceId, peer, at);
    },
    vouchingEnded: (relay, spaceId, peer) => selEnded.get(relay, spaceId, peer)?.ended_at,
    clearVouchingEnded(relay, peer, spaceId) {
      if (spaceId === undefined) delEndedEverywhere.run(relay, peer);
      else delEnded.run(relay, spaceId, peer);
    },
    forget: (relay, spaceId) => immediate(db, () => forgetSpace.forEach((del) => del.run(relay, spaceId))),
    close: closer(db),
  };
}
