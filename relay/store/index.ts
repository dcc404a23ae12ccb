/**
 * The store: one database and one data-access object per aggregate. Adding an aggregate:
 * write relay/store/<name>.ts exporting `create<Name>Store(db)`, add a migration, and add a
 * line to `openStore` and to `Store` below.
 */
import type { Db } from './database.js';
import { openDatabase } from './sqlite/open.js';
import { startWalCheckpoints } from './sqlite/wal-checkpoints.js';
import { createServiceStateStore, type ServiceStateStore } from './service-state.js';
import { createKeyStore, type KeyStore } from './keys.js';
import { createTokenStore, type TokenStore } from './tokens.js';
import { createMailboxStore, type MailboxStore } from './mailbox.js';
import { createPostStore, type PostStore } from './posts.js';
import { createAdmissionStore, type AdmissionStore } from './admission.js';
import { createEventStore, type EventStore } from './events.js';
import { createSpaceStore, type SpaceStore } from './spaces.js';
import { createMemberStore, type MemberStore } from './members.js';
import { createBlockStore, type BlockStore } from './blocks.js';
import { createCheckpointStore, type CheckpointStore } from './checkpoints.js';
import { createSeekStore } from './seek.js';
import type { SeekStore } from './seek-store.js';
import { isPostgresUrl, openPostgres, type OpenPostgresOptions } from './postgres/open.js';
import { startPostgresCluster } from './postgres/cluster.js';
import type { Cluster } from './cluster.js';
import { notifierFor } from '../posts/notify.js';
import { createPostgresSeekStore } from './postgres/seek.js';
import { createRequestStore, type RequestStore } from './requests.js';
import { createInviteStore, type InviteStore } from './invites.js';
import { createHandOverStore, type HandOverStore } from './hand-overs.js';
import { createCategoryCountStore, type CategoryCountStore } from './category-counts.js';
import { createEncryptionKeyStore, type EncryptionKeyStore } from './encryption-keys.js';
import { createSealedStore, type SealedStore } from './sealed.js';
import { createConversationStore, type ConversationStore } from './conversations.js';
import { createMessageStore, type MessageStore } from './messages.js';
import { createMessageBlockStore, type MessageBlockStore } from './message-blocks.js';
import { createMessageRetentionStore, type MessageRetentionStore } from './message-retention.js';
import { createTaskStore, type TaskStore } from './tasks.js';
import { createFileStore, type FileStore } from './files.js';
import { createFindingStore, type FindingStore } from './findings.js';
import { createOracleStore, type OracleStore } from './oracle.js';
import { createOracleLinkStore, type OracleLinkStore } from './oracle-links.js';
import { createOracleReadStore, type OracleReadStore } from './oracle-reads.js';
import { createOAuthStore, type OAuthStore } from './oauth.js';
import { createRecoveryStore, type RecoveryStore } from './recovery.js';
import { createMirrorStore, type MirrorStore } from './mirrors.js';
import { SvcError } from '../../shared/errors.js';

export interface Store {
  readonly db: Db;
  readonly state: ServiceStateStore;
  readonly keys: KeyStore;
  readonly tokens: TokenStore;
  readonly mailbox: MailboxStore;
  readonly posts: PostStore;
  /** What an append reads under the write lock, in one statement (admission.ts). */
  readonly admission: AdmissionStore;
  readonly events: EventStore;
  readonly spaces: SpaceStore;
  readonly members: MemberStore;
  readonly blocks: BlockStore;
  readonly checkpoints: CheckpointStore;
  readonly seek: SeekStore;
  readonly requests: RequestStore;
  readonly invites: InviteStore;
  readonly handOvers: HandOverStore;
  readonly categoryCounts: CategoryCountStore;
  readonly encryptionKeys: EncryptionKeyStore;
  readonly sealed: SealedStore;
  readonly conversations: ConversationStore;
  readonly messages: MessageStore;
  readonly messageBlocks: MessageBlockStore;
  readonly messageRetention: MessageRetentionStore;
  readonly tasks: TaskStore;
  readonly files: FileStore;
  readonly findings: FindingStore;
  readonly oracle: OracleStore;
  readonly oracleLinks: OracleLinkStore;
  readonly oracleReads: OracleReadStore;
  readonly oauth: OAuthStore;
  readonly recovery: RecoveryStore;
  readonly mirrors: MirrorStore;
  /**
   * What the relay processes sharing this database tell each other (relay/store/cluster.ts):
   * on PostgreSQL only; on SQLite one process owns the database.
   */
  readonly cluster?: Cluster | undefined;
  /** True when a trivial query answers (for /healthz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Open (and migrate) the relay's database: the PostgreSQL one a `postgres://` (or
 * `postgresql://`) URL names, else the SQLite file in the data directory `location`, or an
 * in-memory one for ':memory:'. `walCheckpoints: false` leaves SQLite's WAL checkpoints on the
 * connection itself, for a command that opens the store for a moment (a restore), where a
 * thread of their own would cost more than it saves.
 */
export async function openStore(location: string, opts: { walCheckpoints?: boolean } = {}): Promise<Store> {
  if (isPostgresUrl(location)) return await openPostgresStore(location);
  const dataDir = location;
  const db = openDatabase(dataDir);
  const walCheckpoints = dataDir === ':memory:' || opts.walCheckpoints === false ? undefined : startWalCheckpoints(db.raw, db.name);
  return buildStore(db, createSeekStore(db), async () => walCheckpoints?.stop());
}

/**
 * Open (and migrate) the PostgreSQL database `url` names. SEEK's index is the one store
 * written per database (FTS5 there, tsvector and GIN here); every other store is shared.
 */
export async function openPostgresStore(url: string, options: OpenPostgresOptions = {}): Promise<Store> {
  const db = await openPostgres(url, options);
  let cluster: Cluster;
  try {
    cluster = await startPostgresCluster(db, url, {
      log: options.log ?? ((m) => process.stderr.write(`svc-relay: postgres: ${m}\n`)),
      applicationName: options.applicationName,
    });
  } catch (e) {
    await db.close();
    throw e;
  }
  // Long polls and live updates wake for writes made through any process: this process's
  // signals go out after their commit, and the others' come in (before any store signals).
  const notifier = notifierFor(db, { publish: cluster.publish });
  cluster.subscribe(notifier.receive);
  cluster.onResync(notifier.receiveAll);
  return buildStore(db, createPostgresSeekStore(db), async () => await cluster.close(), cluster);
}

/** The stores over an open, migrated database; `beforeClose` stops what the opener started. */
function buildStore(db: Db, seek: SeekStore, beforeClose: () => Promise<void>, cluster?: Cluster): Store {
  const probe = db.prepare('SELECT 1 AS one');
  const events = createEventStore(db);
  const spaces = createSpaceStore(db, events);
  const members = createMemberStore(db, spaces, events);
  const mailbox = createMailboxStore(db);
  const requests = createRequestStore(db, { members, mailbox, events });
  // A direct grant (or any admission) overtakes a waiting join request, in the same transaction.
  members.onAdmitted(async (space, peer, now) => void (await requests.withdrawOnGrant(space.id, peer, now)));
  const invites = createInviteStore(db, { members, events });
  const encryptionKeys = createEncryptionKeyStore(db);
  const sealed = createSealedStore(db, { spaces, members, encryptionKeys });
  // A sealed SPACE admits only KEYS that published an encryption key (sealed.md §2), however
  // they come in; a departure makes the next key change due (§9).
  members.onAdmitting(async (space, peer) => {
    if (space.visibility === 'sealed' && !await encryptionKeys.get(peer)) {
      throw new SvcError('ENCRYPTION_KEY_MISSING', `${peer}: this KEY must publish an encryption key first`);
    }
  });
  members.onRemoved(async (space, peer, now) => await sealed.memberRemoved(space, peer, now));
  // Blocking or unblocking a KEY changes what its tokens authenticate as: the token store forgets its lookups.
  const tokens = createTokenStore(db);
  const handOvers = createHandOverStore(db, { spaces, members, events, invites, mailbox, sealed });
  return {
    db,
    state: createServiceStateStore(db),
    keys: createKeyStore(db, tokens.forget),
    tokens,
    mailbox,
    posts: createPostStore(db),
    admission: createAdmissionStore(db),
    events,
    spaces,
    members,
    blocks: createBlockStore(db, spaces, members, events),
    checkpoints: createCheckpointStore(db),
    seek,
    requests,
    invites,
    handOvers,
    categoryCounts: createCategoryCountStore(db),
    encryptionKeys,
    sealed,
    conversations: createConversationStore(db),
    messages: createMessageStore(db),
    messageBlocks: createMessageBlockStore(db),
    messageRetention: createMessageRetentionStore(db),
    tasks: createTaskStore(db),
    files: createFileStore(db),
    findings: createFindingStore(db),
    oracle: createOracleStore(db),
    oracleLinks: createOracleLinkStore(db),
    oracleReads: createOracleReadStore(db),
    oauth: createOAuthStore(db, tokens.forget),
    recovery: createRecoveryStore(db, spaces, events),
    mirrors: createMirrorStore(db),
    cluster,
    async ping() {
      try {
        return ((await probe.get()) as { one: number } | undefined)?.one === 1;
      } catch {
        return false;
      }
    },
    async close() {
      await beforeClose();
      if (db.open) await db.close();
    },
  };
}
