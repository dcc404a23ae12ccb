import type { Migration } from './types.js';

/**
 * What a member who left a group keeps (spec/1-concepts.md "States: Conversation": a member who
 * left reads up to its leaving only). It sees the conversation as it was when it left, so the
 * group's later life tells it nothing: not the others' later state changes, nor when the group
 * last had a message.
 *
 * - `conversation_members.left_message_at`: the conversation's `last_message_at` at the moment
 *   the member left (the time of its `left_seq` message); its list orders the group by it.
 * - `conversation_left_members`: every member's state and `changed_at` at the moment `viewer`
 *   left, written in the leave's own transaction. Members' states are overwritten in place, so
 *   they cannot be recovered later: a member who accepted before the leave and left after it
 *   would otherwise lose the time it accepted.
 *
 * Members who left before this migration: their group's newest message up to their leaving (or
 * the leave itself, if retention took it), and the members as they stand now, the best that is
 * still known.
 */
export const migration: Migration = {
  id: 8,
  name: 'left_views',
  sql: `
ALTER TABLE conversation_members ADD COLUMN left_message_at INTEGER;

CREATE TABLE conversation_left_members (
  conversation_id TEXT NOT NULL,
  viewer TEXT NOT NULL,
  peer_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('accepted', 'requested', 'declined', 'left')),
  changed_at INTEGER NOT NULL,
  PRIMARY KEY (conversation_id, viewer, peer_id),
  FOREIGN KEY (conversation_id, viewer) REFERENCES conversation_members (conversation_id, peer_id)
) STRICT, WITHOUT ROWID;

UPDATE conversation_members
   SET left_message_at = COALESCE(
     (SELECT g.sent_at FROM messages g
       WHERE g.conversation_id = conversation_members.conversation_id AND g.seq <= conversation_members.left_seq
       ORDER BY g.seq DESC LIMIT 1),
     changed_at)
 WHERE left_seq IS NOT NULL;

INSERT INTO conversation_left_members (conversation_id, viewer, peer_id, state, changed_at)
SELECT l.conversation_id, l.peer_id, o.peer_id, o.state, o.changed_at
  FROM conversation_members l JOIN conversation_members o ON o.conversation_id = l.conversation_id
 WHERE l.left_seq IS NOT NULL;
`,
};
