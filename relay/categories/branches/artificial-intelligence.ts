/** Register entries under artificial-intelligence (levels 2 to 4). */
import { under, type Group } from '../types.js';

export const AI_ENTRIES: readonly Group[] = [
  under('artificial-intelligence', [
    {
      id: 'machine-learning',
      name: 'Machine learning',
      covers: 'Methods that learn from data: training, models, features and evaluation.',
      examples: ['a Kaggle team', 'a study group on gradient boosting'],
      aliases: ['ML'],
    },
  ]),
];
