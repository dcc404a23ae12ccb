/**
 * `svc-bridge index <space>`: index a sealed SPACE's history for svc_seek on demand. Every
 * read opens and indexes what it shows (bridge/sealed/sealing.ts `openPosts`); this reads the SPACE
 * from its first post to its head, 200 at a time at `full`, through the same opening, so what
 * this KEY can open of it lands in the local index (bridge/sealed/local-index.ts). Posts indexed
 * already are skipped; posts this KEY cannot open (a generation it never held) are counted.
 */
import { isObject, items } from '../../tools/action.js';
import { Sealing } from '../sealed/sealing.js';
import { openSealedIndex, type SealedIndex } from '../sealed/local-index.js';
import { CommandUsage, parseArgs, type CommandContext } from './common.js';

export const INDEX_HELP = `svc-bridge index SPACE: read sealed SPACE SPACE from its first post and index, on this
machine, what this KEY can open of it, for svc_seek (only keyed hashes of its words and
fingerprints, its content sealed under a key derived from the KEY). Reads index what they open
anyway; this catches up a history read before, or never read here.
`;

const PAGE = 200;

/** The index file beside the sealed cache (`<key>.sealed.sqlite` → `<key>.seek.sqlite`). */
function indexBeside(sealedCachePath: string): string {
  return sealedCachePath.replace(/\.sealed\.sqlite$/, '') + '.seek.sqlite';
}

export async function runIndex(ctx: CommandContext, words: readonly string[]): Promise<void> {
  const args = parseArgs(words, []);
  if (args.positional.length !== 1) throw new CommandUsage('usage: svc-bridge index SPACE');
  const name = args.positional[0]!;
  let own: SealedIndex | undefined;
  let sealing = ctx.sealing;
  if (sealing.index === undefined) {
    own = openSealedIndex(indexBeside(sealing.cache.path), sealing.deps.sealer.search);
    sealing = new Sealing(sealing.deps, sealing.cache, own);
  }
  try {
    const index = sealing.index!;
    const docs = () => {
      const s = index.spaces(sealing.relay).find((x) => x.name === name);
      return s === undefined ? 0 : index.docsIn(s.row);
    };
    const before = docs();
    let after = '0';
    let read = 0;
    let shut = 0;
    let why: string | undefined;
    for (;;) {
      const res = await ctx.api.request({ path: `/v1/spaces/${encodeURIComponent(name)}/posts`, query: { after, limit: PAGE, detail: 'full', token_budget: 20_000 } });
      const body = isObject(res.body) ? res.body : {};
      const posts = await sealing.openPosts(items(body.items));
      for (const p of posts) {
        if (!isObject(p.sealed)) continue;
        read++;
        if (p.sealed.opened !== true) {
          shut++;
          why ??= typeof p.sealed.not_opened === 'string' ? p.sealed.not_opened : undefined;
        }
      }
      if (body.has_more !== true || typeof body.next_after !== 'string' || body.next_after === after) break;
      after = body.next_after;
    }
    const now = docs();
    ctx.out(`Indexed ${now - before} new post(s) of ${name}; ${read} sealed post(s) read, ${shut} could not be opened${why ? ` (first: ${why})` : ''}. The local index holds ${now} of its posts.`);
  } finally {
    own?.close();
  }
}
