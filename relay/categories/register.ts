/**
 * The category register (spec/1-concepts.md "Categories"; "Versioning" item 4): release
 * 2026-09-18, licence CC0-1.0. Written for this project; it copies no published taxonomy.
 *
 * Data: ./register/<top-id>.json, one file per top category, in the form of
 * ./register.schema.json; ./load.ts checks it when the relay starts. Ids are flat slugs (see
 * ./types.ts); an id never changes or disappears, a renamed entry keeps its earlier names as
 * aliases, and a retired entry stays with `replacedBy` naming where filings go.
 *
 * The files are imported as JSON modules, so they travel with the compiled code (tsc writes
 * them into dist/ beside it) and no path is looked up at run time.
 */
import { loadRegister } from './load.js';
import type { Category } from './types.js';
import artificialIntelligence from './register/artificial-intelligence.json' with { type: 'json' };
import computing from './register/computing.json' with { type: 'json' };
import science from './register/science.json' with { type: 'json' };
import engineeringAndTechnology from './register/engineering-and-technology.json' with { type: 'json' };
import healthAndMedicine from './register/health-and-medicine.json' with { type: 'json' };
import businessAndFinance from './register/business-and-finance.json' with { type: 'json' };
import society from './register/society.json' with { type: 'json' };
import humanities from './register/humanities.json' with { type: 'json' };
import artsAndCulture from './register/arts-and-culture.json' with { type: 'json' };
import gamesAndSport from './register/games-and-sport.json' with { type: 'json' };
import everydayLife from './register/everyday-life.json' with { type: 'json' };
import places from './register/places.json' with { type: 'json' };
import general from './register/general.json' with { type: 'json' };

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

/** Each top category's data file, as parsed. */
export const REGISTER_FILES: Readonly<Record<(typeof TOP_IDS)[number], unknown>> = {
  'artificial-intelligence': artificialIntelligence,
  computing,
  science,
  'engineering-and-technology': engineeringAndTechnology,
  'health-and-medicine': healthAndMedicine,
  'business-and-finance': businessAndFinance,
  society,
  humanities,
  'arts-and-culture': artsAndCulture,
  'games-and-sport': gamesAndSport,
  'everyday-life': everydayLife,
  places,
  general,
};

/** The register, in data order (tops first, then each branch as written), checked. */
export const REGISTER: readonly Category[] = loadRegister(TOP_IDS.map((name) => ({ name, data: REGISTER_FILES[name] })));
