import { describe, expect, it } from 'vitest';
import { isSvcError } from '../../shared/errors.js';
import {
  canAdmit,
  canCheckTasks,
  canDecideProposal,
  canDecideRequests,
  canGovern,
  canHandOver,
  canLeave,
  canListBlocks,
  canMakeLink,
  canModerate,
  canPost,
  canReadEvents,
  canReadMembers,
  canReadPosts,
  canUpdateProfile,
  canUpdateTaskSettings,
  canWorkTasks,
  categoriesRequired,
  checkGovern,
  checkModerate,
  defaultJoinPolicy,
  defaultTaskConfirmations,
  joinPolicyAllowed,
  linkScope,
  oldEnoughForPublic,
  PUBLIC_SPACE_KEY_AGE_SECONDS,
  rankOf,
  type SpaceRole,
} from '../../relay/policy.js';

const ALL: SpaceRole[] = [null, 'reader', 'writer', 'coordinator', 'admin', 'owner'];
const MEMBER_ROLES = ['reader', 'writer', 'coordinator', 'admin'] as const;

const work = { visibility: 'private', oracle: false, joinPolicy: 'invite', status: 'active' } as const;
const publicWork = { visibility: 'public', oracle: false, joinPolicy: 'request', status: 'active' } as const;
const open = { visibility: 'public', oracle: false, joinPolicy: 'open', status: 'active' } as const;
const oracle = { visibility: 'public', oracle: true, joinPolicy: 'request', status: 'active' } as const;

describe('ranks', () => {
  it('orders owner above admin above coordinator above writer above reader above no role', () => {
    const ranks = ALL.map(rankOf);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(new Set(ranks).size).toBe(ALL.length);
    expect(rankOf(null)).toBe(0);
  });
});

describe('reading', () => {
  it('lets anyone read posts of a public SPACE and only members and the owner elsewhere', () => {
    for (const role of ALL) {
      expect(canReadPosts(publicWork, role)).toBe(true);
      expect(canReadPosts(work, role)).toBe(role !== null);
      expect(canReadPosts({ visibility: 'sealed' }, role)).toBe(role !== null);
    }
  });

  it('keeps the members list and the event log to members and the owner, even in public SPACES', () => {
    for (const role of ALL) {
      expect(canReadMembers(role)).toBe(role !== null);
      expect(canReadEvents(role)).toBe(role !== null);
    }
  });
});

describe('posting', () => {
  it('lets writers and above post anywhere and readers only in open or oracle SPACES', () => {
    for (const space of [work, publicWork, open, oracle]) {
      expect(canPost(space, 'writer')).toBe('member');
      expect(canPost(space, 'owner')).toBe('member');
      const openToAll = space.joinPolicy === 'open' || space.oracle;
      expect(canPost(space, 'reader')).toBe(openToAll ? 'member' : false);
      expect(canPost(space, null)).toBe(openToAll ? 'roleless' : false);
    }
  });
});

describe('governing members (the rank rule)', () => {
  const target = (current: SpaceRole, next: SpaceRole, broughtInByActor = true, self = false) => ({ current, next, broughtInByActor, self });

  it('lets an actor touch only members whose current and new rank are strictly below its own', () => {
    for (const actor of ALL) {
      for (const current of [null, ...MEMBER_ROLES] as SpaceRole[]) {
        for (const next of [null, ...MEMBER_ROLES] as SpaceRole[]) {
          if (current === null && next === null) continue;
          const expected = rankOf(actor) >= rankOf('coordinator') && rankOf(current) < rankOf(actor) && rankOf(next) < rankOf(actor);
          expect(canGovern(actor, target(current, next)), `${actor} ${current}->${next}`).toBe(expected);
        }
      }
    }
  });

  it('refuses readers, writers and KEYS with no role any governing', () => {
    for (const actor of [null, 'reader', 'writer'] as SpaceRole[]) {
      expect(canGovern(actor, target(null, 'reader'))).toBe(false);
    }
  });

  it('lets a coordinator change or remove only members it brought in, while admitting anyone below it', () => {
    expect(canGovern('coordinator', target('writer', 'reader', false))).toBe(false);
    expect(canGovern('coordinator', target('writer', null, false))).toBe(false);
    expect(canGovern('coordinator', target('writer', 'reader', true))).toBe(true);
    expect(canGovern('coordinator', target(null, 'writer', false))).toBe(true);
    expect(canGovern('admin', target('writer', 'reader', false))).toBe(true);
  });

  it('keeps admins to the owner: only the owner promotes, demotes or revokes an admin', () => {
    expect(canGovern('admin', target(null, 'admin'))).toBe(false);
    expect(canGovern('admin', target('admin', 'writer'))).toBe(false);
    expect(canGovern('admin', target('coordinator', 'admin'))).toBe(false);
    expect(canGovern('owner', target('writer', 'admin'))).toBe(true);
    expect(canGovern('owner', target('admin', null))).toBe(true);
  });

  it('never lets anyone change their own role, the owner included', () => {
    for (const actor of ALL) expect(canGovern(actor, target('reader', 'writer', true, true))).toBe(false);
  });

  it('throws CONTROL_DENIED with a detail naming the broken rule', () => {
    const cases: [SpaceRole, ReturnType<typeof target>, RegExp][] = [
      ['admin', target('reader', 'reader', true, true), /own role/],
      ['writer', target(null, 'reader'), /coordinator or above/],
      ['admin', target('admin', 'reader'), /current role admin/],
      ['admin', target('writer', 'admin'), /role admin is not below/],
      ['coordinator', target('writer', 'reader', false), /brought in/],
    ];
    for (const [actor, t, detail] of cases) {
      let caught: unknown;
      try {
        checkGovern(actor, t);
      } catch (e) {
        caught = e;
      }
      expect(isSvcError(caught, 'CONTROL_DENIED')).toBe(true);
      expect((caught as { detail?: string }).detail).toMatch(detail);
    }
    expect(() => checkGovern('owner', target('admin', 'writer'))).not.toThrow();
  });
});

describe('links, requests and admission', () => {
  it('admits by link or request only roles below the actor, and never admin by link', () => {
    for (const actor of ALL) {
      for (const role of MEMBER_ROLES) {
        expect(canAdmit(actor, role)).toBe(rankOf(actor) >= 3 && rankOf(role) < rankOf(actor));
        expect(canMakeLink(actor, role)).toBe(role !== 'admin' && rankOf(actor) >= 3 && rankOf(role) < rankOf(actor));
      }
    }
    expect(canMakeLink('owner', 'admin')).toBe(false);
  });

  it('shows every link to admins and the owner, own links to other members, none to outsiders', () => {
    expect(ALL.map(linkScope)).toEqual(['none', 'own', 'own', 'own', 'all', 'all']);
  });

  it('lets coordinators and above decide join requests', () => {
    expect(ALL.map(canDecideRequests)).toEqual([false, false, false, true, true, true]);
  });
});

describe('blocks and hiding', () => {
  it('lets the owner act on anyone but itself and an admin on KEYS ranked below it', () => {
    for (const actor of ALL) {
      for (const t of ALL) {
        const expected = actor === 'owner' ? t !== 'owner' : actor === 'admin' ? rankOf(t) < rankOf('admin') : false;
        expect(canModerate(actor, t), `${actor} on ${t}`).toBe(expected);
      }
    }
    expect(ALL.map(canListBlocks)).toEqual([false, false, false, false, true, true]);
  });

  it('refuses blocking oneself and names why an admin may not act', () => {
    expect(() => checkModerate('owner', null, true)).toThrow(/themselves/);
    expect(() => checkModerate('coordinator', 'reader', false)).toThrow(/admin or owner/);
    expect(() => checkModerate('admin', 'admin', false)).toThrow(/ranked below/);
    expect(() => checkModerate('admin', null, false)).not.toThrow();
  });
});

describe('the SPACE itself', () => {
  it('leaves profile changes to the owner and task settings to owner or admin', () => {
    expect(ALL.map(canUpdateProfile)).toEqual([false, false, false, false, false, true]);
    expect(ALL.map(canUpdateTaskSettings)).toEqual([false, false, false, false, true, true]);
  });

  it('lets members leave and hand over, while the owner only hands over', () => {
    expect(ALL.map(canLeave)).toEqual([false, true, true, true, true, false]);
    expect(ALL.map(canHandOver)).toEqual([false, true, true, true, true, true]);
  });

  it('lets owner and admin decide proposals', () => {
    expect(ALL.map(canDecideProposal)).toEqual([false, false, false, false, true, true]);
  });

  it('allows open join only for a public work space', () => {
    expect(joinPolicyAllowed({ visibility: 'public', oracle: false }, 'open')).toBe(true);
    expect(joinPolicyAllowed({ visibility: 'public', oracle: true }, 'open')).toBe(false);
    expect(joinPolicyAllowed({ visibility: 'private', oracle: false }, 'open')).toBe(false);
    expect(joinPolicyAllowed({ visibility: 'private', oracle: false }, 'request')).toBe(true);
  });

  it('requires categories for public and oracle SPACES only', () => {
    expect(categoriesRequired({ visibility: 'public', oracle: false })).toBe(true);
    expect(categoriesRequired({ visibility: 'private', oracle: true })).toBe(true);
    expect(categoriesRequired({ visibility: 'private', oracle: false })).toBe(false);
    expect(categoriesRequired({ visibility: 'sealed', oracle: false })).toBe(false);
  });

  it('defaults to request for public and invite for private, and 2 or 0 task confirmations', () => {
    expect(defaultJoinPolicy('public')).toBe('request');
    expect(defaultJoinPolicy('private')).toBe('invite');
    expect(defaultJoinPolicy('sealed')).toBe('invite');
    expect(defaultTaskConfirmations('public')).toBe(2);
    expect(defaultTaskConfirmations('private')).toBe(0);
    expect(defaultTaskConfirmations('sealed')).toBe(0);
  });

  it('needs a KEY registered for the whole wait before it creates a public SPACE', () => {
    const wait = PUBLIC_SPACE_KEY_AGE_SECONDS * 1000;
    expect(oldEnoughForPublic(1_000, 1_000 + wait - 1)).toBe(false);
    expect(oldEnoughForPublic(1_000, 1_000 + wait)).toBe(true);
  });
});

describe('tasks', () => {
  it('lets writers and above work tasks and checks follow task_confirmers', () => {
    expect(ALL.map(canWorkTasks)).toEqual([false, false, true, true, true, true]);
    expect(ALL.map((r) => canCheckTasks('members', r))).toEqual([false, false, true, true, true, true]);
    expect(ALL.map((r) => canCheckTasks('coordinators', r))).toEqual([false, false, false, true, true, true]);
  });
});
