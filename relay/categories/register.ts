/**
 * The category register (spec/1-concepts.md "Categories"; "Versioning" item 4): release
 * 2026-09-18, licence CC0-1.0. Written for this project; it copies no published taxonomy.
 *
 * Data: the twelve top categories below, the entries under each in ./branches/ (one file per
 * top category). Ids are flat slugs (see ./types.ts); an id never changes or disappears, a
 * renamed entry keeps its earlier names as aliases, and a retired entry stays with
 * `replacedBy` naming where filings go.
 *
 * Depth (level 1 = a top category): up to level 4 under artificial-intelligence, level 3 inside
 * programming-languages (level 2, under computing), level 2 everywhere else.
 */
import { under, type Category, type Group } from './types.js';
import { AI_ENTRIES } from './branches/artificial-intelligence.js';
import { COMPUTING_ENTRIES } from './branches/computing.js';
import { SCIENCE_ENTRIES } from './branches/science.js';
import { ENGINEERING_ENTRIES } from './branches/engineering.js';
import { HEALTH_ENTRIES } from './branches/health.js';
import { BUSINESS_ENTRIES } from './branches/business.js';
import { SOCIETY_ENTRIES } from './branches/society.js';
import { HUMANITIES_ENTRIES } from './branches/humanities.js';
import { ARTS_ENTRIES } from './branches/arts.js';
import { GAMES_ENTRIES } from './branches/games.js';
import { EVERYDAY_ENTRIES } from './branches/everyday-life.js';
import { PLACES_ENTRIES } from './branches/places.js';
import { GENERAL_ENTRIES } from './branches/general.js';

export const REGISTER_RELEASE = '2026-09-18';
export const REGISTER_LICENCE = 'CC0-1.0';

/** The top categories, in the spec's order (spec/1-concepts.md lists thirteen). */
export const TOP_IDS = [
  'artificial-intelligence',
  'computing',
  'science',
  'engineering-and-technology',
  'health-and-medicine',
  'business-and-finance',
  'society',
  'humanities',
  'arts-and-culture',
  'games-and-sport',
  'everyday-life',
  'places',
  'general',
] as const;

const TOPS: Group = under(null, [
  {
    id: 'artificial-intelligence',
    name: 'Artificial intelligence',
    covers: 'Building, studying, evaluating and governing AI systems and the agents built on them.',
    examples: ['an evaluation suite for coding agents', 'notes on fine-tuning small models'],
    aliases: ['AI', 'machine intelligence'],
    elsewhere: { 'general software engineering': 'computing', 'robot hardware': 'robotics' },
  },
  {
    id: 'computing',
    name: 'Computing',
    covers: 'Software, programming languages, systems, networks, security and data.',
    examples: ['a Rust crate maintainers group', 'a home-lab Kubernetes cluster'],
    aliases: ['software', 'computer science', 'IT'],
    elsewhere: { 'AI and machine learning': 'artificial-intelligence', 'electronics hardware': 'engineering-and-technology' },
  },
  {
    id: 'science',
    name: 'Science',
    covers: 'The natural and formal sciences: mathematics, physics, chemistry, biology, earth and space.',
    examples: ['a reading group on topology', 'shared field notes on bird migration'],
    aliases: ['natural sciences', 'research'],
    elsewhere: { 'medicine and clinical work': 'health-and-medicine', 'social sciences': 'society' },
  },
  {
    id: 'engineering-and-technology',
    name: 'Engineering and technology',
    covers: 'Designing and building physical things: machines, electronics, energy, materials, transport.',
    examples: ['a PCB design review circle', 'a solar installation log'],
    aliases: ['engineering', 'technology', 'hardware'],
    elsewhere: { software: 'computing' },
  },
  {
    id: 'health-and-medicine',
    name: 'Health and medicine',
    covers: 'Medicine, care, public health, mental health and fitness for health.',
    examples: ['a clinical guideline digest', 'a caregivers support circle'],
    aliases: ['health', 'medicine', 'healthcare'],
    elsewhere: { 'sport and training for competition': 'games-and-sport', 'food and cooking': 'everyday-life' },
  },
  {
    id: 'business-and-finance',
    name: 'Business and finance',
    covers: 'Companies, work, markets, money, economics and trade.',
    examples: ['a startup founders forum', 'quarterly earnings notes'],
    aliases: ['business', 'finance', 'economy'],
    elsewhere: { 'household budgeting': 'personal-finance', 'public policy': 'society' },
  },
  {
    id: 'society',
    name: 'Society',
    covers: 'Politics, law, government, communities, education, media and the social sciences.',
    examples: ['a city council watch group', 'a study of local elections'],
    aliases: ['social sciences', 'politics and society'],
    elsewhere: { 'history and philosophy': 'humanities' },
  },
  {
    id: 'humanities',
    name: 'Humanities',
    covers: 'History, philosophy, religion, languages, linguistics and literature as study.',
    examples: ['a Latin reading circle', 'an archive of local history'],
    aliases: ['liberal arts'],
    elsewhere: { 'writing and reading fiction for pleasure': 'arts-and-culture' },
  },
  {
    id: 'arts-and-culture',
    name: 'Arts and culture',
    covers: 'Making and enjoying art: music, film, writing, visual arts, design, performance.',
    examples: ['a screenwriting workshop', 'a record collectors exchange'],
    aliases: ['arts', 'culture', 'entertainment'],
    elsewhere: { games: 'games-and-sport', 'literary study': 'humanities' },
  },
  {
    id: 'games-and-sport',
    name: 'Games and sport',
    covers: 'Video games, board games, puzzles, sports and outdoor pursuits.',
    examples: ['a chess openings study group', 'a five-a-side football league'],
    aliases: ['games', 'sports', 'recreation'],
    elsewhere: { 'game programming': 'game-development' },
  },
  {
    id: 'everyday-life',
    name: 'Everyday life',
    covers: 'Home, food, family, personal finance, shopping, pets and hobbies of daily life.',
    examples: ['a sourdough starter swap', 'a neighbourhood repair café'],
    aliases: ['lifestyle', 'daily life', 'home and living'],
    elsewhere: { 'medical questions': 'health-and-medicine' },
  },
  {
    id: 'places',
    name: 'Places',
    covers: 'SPACES about a region, country or city as such: local news, travel, local groups.',
    examples: ['a Lisbon newcomers group', 'news from the Andes'],
    aliases: ['regions', 'geography', 'local'],
    elsewhere: { 'physical geography as a science': 'earth-sciences' },
  },
  {
    id: 'general',
    name: 'General',
    covers: 'SPACES that fit no single subject: mixed topics, meta discussion, tests and introductions.',
    examples: ['an off-topic lounge', 'a sandbox for trying the service'],
    aliases: ['miscellaneous', 'other', 'misc'],
  },
]);

/** Every group of the register, top categories first. */
export const GROUPS: readonly Group[] = [
  TOPS,
  ...AI_ENTRIES,
  ...COMPUTING_ENTRIES,
  ...SCIENCE_ENTRIES,
  ...ENGINEERING_ENTRIES,
  ...HEALTH_ENTRIES,
  ...BUSINESS_ENTRIES,
  ...SOCIETY_ENTRIES,
  ...HUMANITIES_ENTRIES,
  ...ARTS_ENTRIES,
  ...GAMES_ENTRIES,
  ...EVERYDAY_ENTRIES,
  ...PLACES_ENTRIES,
  ...GENERAL_ENTRIES,
];

function build(groups: readonly Group[]): readonly Category[] {
  const out: Category[] = [];
  for (const group of groups) {
    for (const e of group.entries) {
      out.push(
        Object.freeze({
          id: e.id,
          name: e.name,
          parent: group.parent,
          covers: e.covers,
          elsewhere: Object.freeze(Object.entries(e.elsewhere ?? {}).map(([topic, id]) => Object.freeze({ topic, id }))),
          examples: Object.freeze([...e.examples]),
          aliases: Object.freeze([...(e.aliases ?? [])]),
          replacedBy: e.replacedBy ?? null,
        }),
      );
    }
  }
  return Object.freeze(out);
}

/** The register, in data order (tops first, then each branch depth first as written). */
export const REGISTER: readonly Category[] = build(GROUPS);
