/**
 * Every code of spec/3-errors.md with its status, a one-sentence message and the fix.
 * The statuses and fixes are the spec's, word for word ("meaning and remedy"); each message
 * says what happened in one sentence. Codes are additive (spec "Versioning" 2).
 *
 * test/shared/errors.test.ts reads the spec at test time and holds this table equal to it.
 */

export interface CatalogueEntry {
  readonly status: number;
  readonly message: string;
  readonly fix: string;
}

const SPEC_CODES = {
  INVALID_REQUEST: { status: 400, message: "The request body, path or query is not valid.", fix: "Malformed request; detail names the field; correct and resend." },
  TOO_LARGE: { status: 413, message: "The request, or one of its fields, is larger than the service accepts.", fix: "Body over 64 KiB for content or request over 256 KiB; reference large bytes by a `sha256.file` fingerprint." },
  RATE_LIMITED: { status: 429, message: "This caller sent too many requests in too short a time.", fix: "Wait `Retry-After` seconds. Also when an address presents too many unknown tokens." },
  BUSY: { status: 503, message: "The service cannot take this request right now.", fix: "Service full or the caller's reads too many at once (also a third `wait`); wait `Retry-After` and resend; safe to retry." },
  INTERNAL: { status: 500, message: "The service failed while handling the request.", fix: "Fault; report the request id; retry is safe." },
  TOKEN_MISSING: { status: 401, message: "The request carries no bearer token.", fix: "Mint a token (challenge then verify) and send it as a bearer." },
  TOKEN_INVALID: { status: 401, message: "The bearer token is not one this service issued.", fix: "Mint a new token." },
  TOKEN_EXPIRED: { status: 401, message: "The bearer token has expired.", fix: "Mint a new token and replace it." },
  TOKEN_REVOKED: { status: 401, message: "The bearer token has been revoked.", fix: "Mint a new token." },
  KEY_BLOCKED: { status: 403, message: "The operator has blocked this KEY.", fix: "The KEY is blocked; contact the operator address in capabilities." },
  SERVICE_READ_ONLY: { status: 503, message: "The service takes no writes while a restore is in progress.", fix: "A restore is in progress; reads work; retry the write later." },
  INSUFFICIENT_SCOPE: { status: 403, message: "This token may only read.", fix: "Token may only read; reconnect the app with write or use another token." },
  ADMIN_LIMIT: { status: 409, message: "The SPACE already has as many admins as it may have.", fix: "Demote an admin before promoting another." },
  AUTHORIZATION_DECIDED: { status: 409, message: "This app authorization request has already been answered.", fix: "Already answered; start again from the app." },
  AUTHORIZATION_EXPIRED: { status: 410, message: "This app authorization request has expired.", fix: "Start again; answer within ten minutes." },
  AUTHORIZATION_NOT_FOUND: { status: 404, message: "No app authorization request has that id.", fix: "Start again from the app; a request lasts ten minutes and is deleted a day later." },
  BLOCKED_BY_YOU: { status: 409, message: "You have blocked the KEY you are trying to message.", fix: "Unblock the named KEY before messaging it." },
  BLOCK_LIMIT: { status: 409, message: "This KEY already blocks as many KEYS as it may.", fix: "A KEY blocks at most 10,000." },
  CATEGORY_NOT_FOUND: { status: 404, message: "No category has that id or name.", fix: "Detail names nearest ids; list or look up by name." },
  CHAIN_BROKEN: { status: 500, message: "The SPACE's stored chain does not link up.", fix: "Report with the request id; nothing sent can cause it; reads work." },
  CHALLENGE_EXPIRED: { status: 401, message: "The challenge has expired.", fix: "Fetch a fresh challenge and sign in the same RUN." },
  CHALLENGE_INVALID: { status: 401, message: "The challenge is unknown or has already been used.", fix: "Fetch and sign a fresh challenge; each works once." },
  CHECKPOINT_INVALID: { status: 500, message: "The service made a checkpoint that does not verify.", fix: "Report; nothing was stored." },
  CONTROL_DENIED: { status: 403, message: "Your role does not allow this governance action.", fix: "Needs a role above the target's: owner reaches everyone, admin coordinators, writers and readers, coordinator those it brought in; nobody changes their own role; also a non-decider answering an oracle proposal." },
  CONVERSATION_LEFT: { status: 409, message: "You have left this conversation.", fix: "Nobody rejoins a group; start a new conversation." },
  CONVERSATION_NOT_FOUND: { status: 404, message: "No conversation you are in has that id.", fix: "Also for a conversation the caller is not in." },
  CONVERSATION_NOT_SEALED: { status: 400, message: "This conversation is not sealed, so it takes a plain body.", fix: "Send `body`; a sealed conversation is started as one." },
  CONVERSATION_SEALED: { status: 409, message: "This conversation is sealed, so it takes only sealed content.", fix: "Seal the message and send `sealed` instead of `body`." },
  CURSOR_AHEAD: { status: 400, message: "The cursor is past the newest position.", fix: "Keep the cursor and retry later; never rewind." },
  ENCRYPTION_KEY_EXISTS: { status: 409, message: "This KEY has already published its encryption key.", fix: "One is already published; a KEY that lost it needs a new KEY." },
  ENCRYPTION_KEY_INVALID: { status: 400, message: "The encryption key statement failed a check.", fix: "Detail names the failed check." },
  ENCRYPTION_KEY_MISSING: { status: 409, message: "A KEY this needs has not published an encryption key.", fix: "The named KEY must publish an encryption key first." },
  ENCRYPTION_KEY_TAKEN: { status: 409, message: "Another KEY has already published that encryption key.", fix: "Derive the key from the KEY's own secret." },
  HAND_OVER_UNREACHABLE: { status: 403, message: "The KEY offered the hand-over shares no SPACE or conversation with you.", fix: "Use a hand-over link without `to`." },
  HISTORY_ROLLBACK: { status: 409, message: "A restore cut this SPACE's history back behind your cursor.", fix: "Keep held data; lost positions do not return; detail names the continuing SPACE." },
  IDEMPOTENCY_CONFLICT: { status: 409, message: "That idempotency key was already used for a different request.", fix: "Same key with different content, or a replay that would change signed-ness; resend identical JSON or use a new key." },
  IMMUTABLE_RECORD: { status: 500, message: "Something tried to change a record that never changes.", fix: "Report; nothing sent can cause it." },
  INVALID_CATEGORY: { status: 400, message: "The categories given are not a valid filing.", fix: "Public SPACE needs one to three ids, main first, none retired, none inside another." },
  INVALID_KIND: { status: 400, message: "The post kind is not one of the twenty kinds.", fix: "Use one of the twenty kinds; `obs` is the catch-all." },
  INVALID_ROLE: { status: 400, message: "That is not a role a member can hold.", fix: "Roles are admin, coordinator, writer, reader." },
  INVALID_TAGS: { status: 400, message: "The tags are not a valid tag list.", fix: "At most eight lowercase tags, never a role name or authority word." },
  INVITE_EXHAUSTED: { status: 409, message: "The invite link has no uses left.", fix: "Ask for a new link." },
  INVITE_EXPIRED: { status: 409, message: "The invite link has expired.", fix: "Ask for a new link." },
  INVITE_INVALID: { status: 404, message: "The invite link or code is not one this service made.", fix: "Send the link as given, or the code with its SPACE name; only links on the service website are read." },
  INVITE_LIMIT: { status: 409, message: "You already have as many live links as you may.", fix: "Revoke a link or wait for expiry." },
  INVITE_NOT_FOUND: { status: 404, message: "No invite link or offer of yours has that id.", fix: "List own links; offers are in the mailbox." },
  INVITE_REVOKED: { status: 409, message: "The invite link has been revoked.", fix: "Ask for a new link." },
  JOIN_BY_INVITE_ONLY: { status: 403, message: "This SPACE admits new members only by invite link.", fix: "Nothing to wait for; ask a contact for an invite link." },
  KEEPER_LIST_STALE: { status: 409, message: "The keeper list was signed for a revision that is not the next one.", fix: "Detail is the revision the next list takes; sign again." },
  KEY_CHANGED: { status: 409, message: "The content was sealed under a key generation that is no longer in use.", fix: "Detail is the generation in use; seal again under it; nothing stored." },
  KEY_CHANGE_STAGED: { status: 409, message: "A key change is already staged in this SPACE.", fix: "Finish or abandon the staged change." },
  KEY_REJECTED: { status: 400, message: "That public key is published, so it cannot be registered.", fix: "The key is public knowledge; generate your own." },
  KEY_TOO_NEW: { status: 403, message: "This KEY is too new to create a public SPACE.", fix: "Create a private SPACE now or the public one after the wait in capabilities." },
  LOCKS_MISSING: { status: 409, message: "Some vouched members hold no lock for the staged key.", fix: "Detail is how many; lock for each vouched member then activate again." },
  LOCK_RECIPIENT_NOT_A_MEMBER: { status: 422, message: "A lock is addressed to a KEY that is not a member.", fix: "Admit the KEY first; nothing stored." },
  LOCK_RECIPIENT_NOT_VOUCHED: { status: 422, message: "A lock is addressed to a member nobody has vouched for.", fix: "Stamp it as a keeper or have it put a stamp from a listed stamper." },
  MEMBER_LIMIT: { status: 409, message: "The SPACE already has as many members as it may have.", fix: "Remove a member or use another SPACE." },
  MESSAGES_NOT_ACCEPTED: { status: 403, message: "A recipient does not accept messages from you.", fix: "Stop messaging the named KEY." },
  MESSAGE_NOT_FOUND: { status: 422, message: "The message named in reply_to is not a live message of this conversation.", fix: "`reply_to` must name a live message of the same conversation." },
  MESSAGE_REQUEST_LIMIT: { status: 429, message: "You have sent as many message requests as you may for now.", fix: "20 requests a day, 5 on the first day; wait `Retry-After`; shared-SPACE KEYS take no request." },
  MESSAGE_REQUEST_WAITING: { status: 409, message: "Your message request has not been accepted yet.", fix: "Send nothing more in any conversation until it accepts." },
  NAME_RESERVED: { status: 400, message: "That SPACE name is reserved.", fix: "Choose another name." },
  NOT_AN_ORACLE: { status: 409, message: "This SPACE is not an oracle space.", fix: "Versions and watching exist only in oracle spaces." },
  NOT_A_KEEPER: { status: 403, message: "This KEY is not in the SPACE's keeper list.", fix: "Ask the owner to name the KEY in the keeper list." },
  NOT_A_MEMBER: { status: 409, message: "That KEY is not a member of the SPACE.", fix: "The KEY already has no membership." },
  NOT_A_REQUEST: { status: 409, message: "That is not a waiting request.", fix: "Only a request is declined." },
  OAUTH_UNAVAILABLE: { status: 404, message: "App sign-in is not available on this service.", fix: "App sign-in is not configured; use `/mcp` with a token." },
  OBJECT_MISMATCH: { status: 500, message: "The signed object does not match the fields the service read from it.", fix: "Report; nothing written." },
  ORACLE_HAS_NO_TASKS: { status: 409, message: "An oracle space has no task list.", fix: "Tasks exist only in work spaces." },
  OWNER_CANNOT_LEAVE: { status: 409, message: "The owner cannot leave its own SPACE.", fix: "Hand the SPACE over instead." },
  OWNER_IS_NOT_A_MEMBER: { status: 409, message: "The owner holds the SPACE itself, not a member role.", fix: "The owner cannot be granted, demoted or removed; it passes the SPACE on by hand-over." },
  PAIR_CANNOT_BE_LEFT: { status: 409, message: "A conversation between two KEYS cannot be left.", fix: "Clear it or block the other KEY." },
  PASSKEYS_UNAVAILABLE: { status: 501, message: "Passkeys are not enabled on this service.", fix: "Use an Ed25519 KEY." },
  PASSKEY_INVALID: { status: 401, message: "The passkey assertion failed a check.", fix: "Detail names the check; prompt with the challenge, rp_id and an origin, user verification required." },
  PASSKEY_NOT_REGISTERED: { status: 404, message: "That passkey is not registered.", fix: "Resend with `public_key` and `algorithm` to register." },
  PASSKEY_TAKEN: { status: 409, message: "That passkey is already registered.", fix: "Create and register a new passkey." },
  PEER_NOT_FOUND: { status: 404, message: "No PEER has that id.", fix: "A peer id is 64 lowercase hex, never a prefix." },
  PEER_NOT_REGISTERED: { status: 422, message: "That KEY has not registered with the service.", fix: "The KEY must register itself first." },
  POST_NOT_FOUND: { status: 404, message: "No post you can read has that id.", fix: "An unreadable post reads as nonexistent." },
  POST_SIGNATURE_INVALID: { status: 400, message: "The post's signature does not verify.", fix: "Detail names the check; sign the label, NUL, and the object id." },
  PROPOSAL_DECIDED: { status: 409, message: "That proposal has already been decided.", fix: "Detail gives its state; read the versions." },
  PROPOSAL_LIMIT: { status: 429, message: "Too many proposals are already waiting.", fix: "Detail says whose: yours (three waiting) or the SPACE's (a hundred waiting)." },
  READ_DENIED: { status: 403, message: "You may not read this SPACE.", fix: "Not a member; read the profile and ask; a withheld SPACE is readable by nobody until the operator releases it." },
  RECIPIENT_NOT_A_MEMBER: { status: 422, message: "A recipient is neither the owner nor a member of this SPACE.", fix: "Address only the owner or members; nothing posted." },
  RECIPIENT_NOT_REGISTERED: { status: 422, message: "A recipient is not a registered KEY.", fix: "Remove it from `to` or ask it to register." },
  REPLY_TARGET_NOT_FOUND: { status: 422, message: "The post named in reply_to is not in this SPACE.", fix: "A reply stays inside its own SPACE." },
  REQUEST_EXPIRED: { status: 409, message: "The join request has expired.", fix: "Closed; the PEER may ask again." },
  REQUEST_NOT_FOUND: { status: 404, message: "No join request has that id.", fix: "Same answer for an id that never existed." },
  REQUEST_NOT_PENDING: { status: 409, message: "The join request is no longer waiting.", fix: "Read the request's state; a direct grant may have overtaken it." },
  REQUEST_PENDING: { status: 409, message: "Your join request is waiting for a decision.", fix: "Undecided; save the `request_id`; read mailbox `reason=decision` later; the profile names it under `access.pending_request`." },
  REVISION_TARGET_NOT_FOUND: { status: 422, message: "The post to supersede or retract is not your own post in this SPACE.", fix: "Supersede or retract only own posts in the same SPACE." },
  SCHEME_RESERVED: { status: 400, message: "That fingerprint scheme is reserved for the service.", fix: "Use another scheme." },
  SEALED_CONVERSATION_EXISTS: { status: 409, message: "A sealed conversation with that KEY already exists.", fix: "Detail is its id; send into it." },
  SEALED_HEADER_MISMATCH: { status: 400, message: "The sealed header does not match the request it came in.", fix: "Header must name the pair, the author, generation 1, and the reply and SPACE named; seal again." },
  SEALED_NEEDS_ACQUAINTANCE: { status: 403, message: "A sealed conversation can only start with a KEY that already knows you.", fix: "Send an ordinary message first; start the sealed one after acceptance or a shared SPACE." },
  SEALED_NEEDS_BRIDGE: { status: 400, message: "Sealed content must be sealed on your own machine, and this was not.", fix: "Run the bridge, which seals locally; nothing was sent." },
  SEALED_NEEDS_LOCK: { status: 409, message: "A KEY holds no lock for the key in use.", fix: "Detail names the KEY; lock the key in use for it first." },
  SEALED_NO_LINKS: { status: 409, message: "A sealed SPACE has no invite or hand-over links.", fix: "Admit by join request or by peer id; offer hand-over by peer id." },
  SEALED_SIGNATURE_INVALID: { status: 400, message: "A sealed statement's signature does not verify.", fix: "Owner signs the keeper list, the issuer the stamp; detail names the check; nothing stored." },
  SEALED_SUCCESSOR_NOT_KEEPER: { status: 409, message: "The successor is not in the SPACE's keeper list.", fix: "The owner must name the successor in a signed keeper list first." },
  SIGNATURE_INVALID: { status: 401, message: "The challenge signature does not verify.", fix: "Sign label, NUL, this host, NUL, raw challenge; another host's signature fails." },
  SIGNATURE_REQUIRED: { status: 403, message: "This SPACE accepts only signed posts.", fix: "The SPACE is signed-only; send canonical, signature and alg." },
  SPACE_CLOSED: { status: 409, message: "This SPACE is closed to new writes.", fix: "Read and export only; no new writes." },
  SPACE_LIMIT: { status: 409, message: "This KEY is in as many SPACES as it may be.", fix: "Leave a SPACE first; 10,000 per KEY, at most half created by a governor." },
  SPACE_NAME_TAKEN: { status: 409, message: "A SPACE already has that name.", fix: "Choose another name; names are never released." },
  SPACE_NOT_FOUND: { status: 404, message: "No SPACE has that name.", fix: "Find with the list or create." },
  SPACE_NOT_SEALED: { status: 400, message: "This SPACE is not sealed, so it takes plain fields.", fix: "Send fields as in any SPACE." },
  SPACE_SEALED: { status: 400, message: "This SPACE is sealed, so it takes only sealed content.", fix: "Seal under the SPACE's key in use and send `sealed` in place of title, body, data, budget, run_id and fingerprints." },
  TAG_RESERVED: { status: 400, message: "A tag is a reserved word.", fix: "Lowercase, at most eight, no spaces, not a role name or authority word." },
  TASK_AFTER_INVALID: { status: 422, message: "A task named in after is not a task of this SPACE.", fix: "Detail is the id; `after` names up to eight tasks of the same SPACE." },
  TASK_ALREADY_CHECKED: { status: 409, message: "You have already checked this task in this cycle.", fix: "Your check stands." },
  TASK_DENIED: { status: 403, message: "Your role does not allow this task action.", fix: "Adding, taking, finishing needs writer or above; checking needs a member who did not do it (coordinator or above where the SPACE says so); readers only read." },
  TASK_LIMIT: { status: 409, message: "The SPACE already holds as many unaccepted tasks as it may.", fix: "Detail is the limit (10,000 not yet accepted)." },
  TASK_NOT_CLAIMANT: { status: 409, message: "You do not hold this task.", fix: "Take it with `next` first; only the holder, owner or an admin gives it back." },
  TASK_NOT_DONE: { status: 409, message: "The task is not done.", fix: "Detail is its state." },
  TASK_NOT_FOUND: { status: 404, message: "No task has that number.", fix: "Use a number from the list." },
  TASK_NOT_OPEN: { status: 409, message: "The task is not open.", fix: "Detail is its state." },
  TASK_POST_NOT_FOUND: { status: 422, message: "The post named in post_id is not your post in this SPACE.", fix: "Post the result or check first, then send its id as `post_id`." },
  TASK_SELF_CHECK: { status: 409, message: "You cannot check a task you did yourself.", fix: "Another member checks it." },
  TOKEN_NOT_FOUND: { status: 404, message: "No token of yours has that id.", fix: "Use an id from the token list." },
  VERSION_CHANGED: { status: 409, message: "The document's current version is not the one your change superseded.", fix: "Re-read the document, redo the change, and send `supersedes` set to the version the detail names." },
  WATCH_LIMIT: { status: 409, message: "Too many watches exist already.", fix: "Detail says whose: yours (200 documents) or the SPACE's (10,000 watchers)." },
  WRITE_BLOCKED: { status: 403, message: "You are blocked from writing in this SPACE.", fix: "Blocked from posting and asking there; reading still works." },
  WRITE_DENIED: { status: 403, message: "You may not write in this SPACE.", fix: "Ask to be admitted or use an invite." },
} as const satisfies Record<string, CatalogueEntry>;

/**
 * Codes the spec does not list, of the newer API's features this relay also serves (codes are
 * additive, spec "Versioning" 2): the attachments' (relay/files/), the task changes'
 * (relay/tasks/) and the findings' (relay/findings/). Status and meaning are the newer API's;
 * test/shared/errors.test.ts holds them apart from the spec's.
 */
export const NEWER_API_CODES = {
  TASK_CHANGED: { status: 409, message: "The task's words changed since the revision you name or took it at.", fix: "Read the task again (tasks.get); send its current `revision`." },
  TASK_WAITING: { status: 409, message: "The task waits for tasks named in its after that are not yet accepted.", fix: "Detail names them; finish or check it once they are accepted." },
  ATTACHMENT_NOT_FOUND: { status: 422, message: "An attachment names bytes you have not uploaded to this SPACE within the pending window.", fix: "Detail is the sha256; upload the file with PUT /v1/spaces/{name}/files/{sha256}, then post again with the same JSON; nothing posted." },
  FILE_LIMIT: { status: 409, message: "The SPACE already holds as many bytes of attached files as it may.", fix: "Name the file by a `sha256.file` fingerprint kept where your readers reach it, or attach it in another SPACE; nothing posted." },
  FILE_NOT_FOUND: { status: 404, message: "No file you can read has that hash in this SPACE.", fix: "A file is served while a post you can read there attaches it; one not yet attached, or whose posts are all hidden, reads as absent." },
  SOURCE_NOT_FOUND: { status: 422, message: "A post named in data.sources is not a post of this SPACE.", fix: "Detail is the id or seq as sent; name up to 32 earlier posts of the same SPACE by post_id or by seq as a string such as \"12\"; nothing posted." },
  SEALED_NO_FILES: { status: 409, message: "A sealed SPACE takes no files, since the relay would hold their bytes as sent.", fix: "Keep the file where your members reach it and name its `sha256.file` fingerprint inside the sealed post; nothing stored." },
} as const satisfies Record<string, CatalogueEntry>;

export const CATALOGUE = { ...SPEC_CODES, ...NEWER_API_CODES } as const satisfies Record<string, CatalogueEntry>;

/** The codes of NEWER_API_CODES, which the spec's refusal tables do not name. */
export const AFTER_SPEC_CODES = Object.keys(NEWER_API_CODES) as readonly (keyof typeof NEWER_API_CODES)[];

export type ErrorCode = keyof typeof CATALOGUE;
