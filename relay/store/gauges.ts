/**
 * Readings of the store that the metrics take when scraped (relay/metrics/): how far signed
 * checkpoints lag behind each stream, how far SEEK's index lags behind the posts, and how big
 * the database files are. Read-only, from the statements prepared here once.
 *
 * Checkpoint lag is the positions no checkpoint covers yet, summed over every SPACE, and the
 * time of the oldest of them (the checkpointer signs a range once 1,024 positions wait or the
 * oldest is ten minutes old, so a lag past that says the checkpointer is stuck). Each SPACE
 * costs four index look-ups (the two heads, the two newest checkpoints): a scrape walks every
 * SPACE, which stays well under a millisecond per thousand SPACES.
 */
import { statSync } from 'node:fs';
import type { Stream } from '../../shared/checkpoint.js';
import type { Db } from './database.js';

export interface StreamLag {
  /** Positions no checkpoint covers yet. */
  positions: number;
  /** When the oldest of them was appended (ms), or undefined when none waits. */
  oldestAt: number | undefined;
}

export interface DatabaseSize {
  /** The database file (or the pages of an in-memory database). */
  database: number;
  /** The write-ahead log (0 when there is none). */
  wal: number;
}

export interface StoreGauges {
  checkpointLag(): Promise<Record<Stream, StreamLag>>;
  /** Posts stored above SEEK's watermark, not yet in its index. */
  seekBacklog(): Promise<number>;
  /** Posts stored (never deleted, so the highest row id). */
  postsStored(): Promise<number>;
  databaseSize(): Promise<DatabaseSize>;
}

interface HeadRow {
  id: number;
  post_head: number | null;
  post_covered: number | null;
  event_head: number | null;
  event_covered: number | null;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function createStoreGauges(db: Db): StoreGauges {
  const heads = db.prepare<[], HeadRow>(
    `SELECT s.id,
            (SELECT MAX(seq) FROM posts WHERE space_row_id = s.id) AS post_head,
            (SELECT MAX(last) FROM checkpoints WHERE space_row_id = s.id AND stream = 'posts') AS post_covered,
            (SELECT MAX(revision) FROM space_events WHERE space_row_id = s.id) AS event_head,
            (SELECT MAX(last) FROM checkpoints WHERE space_row_id = s.id AND stream = 'events') AS event_covered
       FROM spaces s`,
  );
  const postTime = db.prepare<[number, number], { t: number }>('SELECT posted_at AS t FROM posts WHERE space_row_id = ? AND seq = ?');
  const eventTime = db.prepare<[number, number], { t: number }>('SELECT at AS t FROM space_events WHERE space_row_id = ? AND revision = ?');
  const watermark = db.prepare<[], { indexed_upto: number }>('SELECT indexed_upto FROM seek_state WHERE id = 1');
  const above = db.prepare<[number], { n: number }>('SELECT COUNT(*) AS n FROM posts WHERE id > ?');
  const lastPost = db.prepare<[], { n: number | null }>('SELECT MAX(id) AS n FROM posts');
  const pages = db.prepare<[], { bytes: number }>(
    db.dialect === 'postgres'
      ? 'SELECT pg_database_size(current_database()) AS bytes'
      : 'SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()',
  );

  async function add(lag: StreamLag, head: number | null, covered: number | null, timeOf: () => Promise<number | undefined>): Promise<void> {
    const waiting = (head ?? 0) - (covered ?? 0);
    if (waiting <= 0) return;
    lag.positions += waiting;
    const at = await timeOf();
    if (at !== undefined && (lag.oldestAt === undefined || at < lag.oldestAt)) lag.oldestAt = at;
  }

  return {
    async checkpointLag() {
      const posts: StreamLag = { positions: 0, oldestAt: undefined };
      const events: StreamLag = { positions: 0, oldestAt: undefined };
      for (const r of await heads.all()) {
        await add(posts, r.post_head, r.post_covered, async () => (await postTime.get(r.id, (r.post_covered ?? 0) + 1))?.t);
        await add(events, r.event_head, r.event_covered, async () => (await eventTime.get(r.id, (r.event_covered ?? 0) + 1))?.t);
      }
      return { posts, events };
    },
    async seekBacklog() {
      return (await above.get((await watermark.get())?.indexed_upto ?? 0))?.n ?? 0;
    },
    async postsStored() {
      return (await lastPost.get())?.n ?? 0;
    },
    async databaseSize() {
      // PostgreSQL: the database's size as the server counts it (its WAL is the server's own).
      if (db.dialect === 'postgres' || db.name === ':memory:') return { database: (await pages.get())?.bytes ?? 0, wal: 0 };
      return { database: fileSize(db.name), wal: fileSize(`${db.name}-wal`) };
    },
  };
}
