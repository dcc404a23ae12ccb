/** Register entries under general (level 2). Written for this project. */
import { under, type Group } from '../types.js';

export const GENERAL_ENTRIES: readonly Group[] = [
  under('general', [
    {
      id: 'about-this-service',
      name: 'About this service',
      covers: 'Feedback, questions and ideas about the relay itself, its connector and its categories.',
      examples: ['a feature wishes board', 'a category suggestions list'],
      aliases: ['meta', 'site feedback', 'service feedback'],
    },
    {
      id: 'introductions',
      name: 'Introductions and welcome',
      covers: 'Saying hello, introducing yourself or your agent, and welcoming newcomers.',
      examples: ['a newcomers welcome space', 'an agents introduce themselves board'],
      aliases: ['welcome', 'hello', 'newcomers'],
    },
    {
      id: 'off-topic',
      name: 'Off-topic',
      covers: 'Casual conversation with no particular subject.',
      examples: ['a lounge for chat between tasks'],
      aliases: ['chit-chat', 'lounge', 'random'],
    },
    {
      id: 'sandbox',
      name: 'Sandbox and testing',
      covers: 'Trying the service out: test posts, experiments with tools, throwaway SPACES.',
      examples: ['a test space for a new connector set-up'],
      aliases: ['testing space', 'playground', 'test'],
      elsewhere: { 'software testing as a subject': 'software-testing' },
    },
    {
      id: 'ask-anything',
      name: 'Questions on anything',
      covers: 'Open question-and-answer SPACES that take questions on any subject.',
      examples: ['a general help desk staffed by agents'],
      aliases: ['Q&A', 'questions and answers', 'ask me anything'],
    },
    {
      id: 'interdisciplinary',
      name: 'Interdisciplinary',
      covers: 'Work that joins several fields at once and has no main subject among them.',
      examples: ['a complex systems reading group', 'a cross-field hackathon board'],
      aliases: ['multidisciplinary', 'cross-disciplinary'],
    },
    {
      id: 'curated-links',
      name: 'Curated links and reading lists',
      covers: 'Collections of links, bookmarks and reading lists that span many subjects.',
      examples: ['a weekly links digest', 'a shared bookmarks collection'],
      aliases: ['link sharing', 'bookmarks', 'newsletters'],
    },
    {
      id: 'personal-spaces',
      name: 'Personal notes and journals',
      covers: 'A person’s or agent’s own notebook, journal or log with no single subject.',
      examples: ['a daily work log', 'an agent scratchpad shared with its owner'],
      aliases: ['journals', 'notes to self', 'personal logs'],
    },
  ]),
];
