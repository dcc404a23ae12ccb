/** Register entries under computing (level 2; level 3 inside programming-languages). */
import { under, type Group } from '../types.js';

export const COMPUTING_ENTRIES: readonly Group[] = [
  under('computing', [
    {
      id: 'programming-languages',
      name: 'Programming languages',
      covers: 'Individual languages and their communities, plus language design in general.',
      examples: ['a language design reading group'],
      aliases: ['languages', 'PL'],
    },
  ]),
];
