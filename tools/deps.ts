/**
 * What the MCP server is built from (STYLE.md: `createServer(deps)`): the relay client, the
 * KEY's public identity and a signer (never key bytes), the local cache, the run id.
 * Nothing here is MCP session state: SPACE and cursor state live in tool arguments and the cache.
 *
 * The same tool layer is served by the relay's connector (relay/connector/, DESIGN.md "MCP"),
 * which holds no KEY: there `served` is 'relay', there is no signer, salt, sealing or run id
 * (posts go unsigned; sealing answers SEALED_NEEDS_BRIDGE, sending nothing), and the cache is
 * the connector's in-memory one (tools/cache/memory-cache.ts).
 */
import type { Signer } from '../shared/identity.js';
import type { Cache } from './cache/cache.js';
import type { RelayApi } from './api.js';
import type { ListenStreams, Outbox, Sealing } from './ports.js';
import type { Toolset } from './toolsets.js';
import type { WitnessPolicy } from './verify/witnesses.js';

export interface BridgeIdentity {
  /** The KEY's name in the key directory; '' at the relay's connector, which has no key directory. */
  readonly keyName: string;
  /** 64 lowercase hex. */
  readonly peerId: string;
  readonly publicKey: string;
}

export interface BridgeDeps {
  readonly api: RelayApi;
  readonly identity: BridgeIdentity;
  /** Where the tools are served: the bridge (default) or the relay's connector. */
  readonly served?: 'bridge' | 'relay' | undefined;
  /** Signs with the KEY; tools never see its private half. None at the relay: posts go unsigned. */
  readonly signer?: Signer | undefined;
  readonly cache: Cache;
  /** One lowercase UUID per bridge run, attached to posts unless the agent gives one; none at the relay. */
  readonly runId?: string | undefined;
  readonly version: string;
  /** Local clock (ms). */
  readonly now: () => number;
  /** One line to stderr; stdout belongs to the protocol. */
  readonly log: (line: string) => void;
  /** The KEY's private-part salt for signed posts, per SPACE and idempotency key (bridge/keys/keys.ts); no key bytes. Given with `signer`. */
  readonly privateSalt?: ((spaceId: string, idempotencyKey: string) => Uint8Array) | undefined;
  /** SVC_UNSIGNED=1: post unsigned where a SPACE allows it (always, without a signer). */
  readonly unsigned: boolean;
  /** Sealed SPACES and pairs: seals and opens with the KEY's encryption key (bridge/sealed/sealing-port.ts); none without a KEY seed. */
  readonly sealing?: Sealing | undefined;
  /** The stdio entry's `subscriptions/listen` streams (tools/resources/subscriptions.ts `ListenTap`), when serving stdio. */
  readonly listen?: ListenStreams | undefined;
  /** Offline writes (bridge/outbox/send.ts): posts and messages kept while the relay cannot be reached. None at the relay. */
  readonly outbox?: Outbox | undefined;
  /** SVC_WITNESSES: the witnesses whose cosignatures make a SPACE's history verified (tools/verify/witnesses.ts). */
  readonly witnesses?: WitnessPolicy | undefined;
  /**
   * The caller may only read (at the relay's /mcp/connect, an app given read access only): a
   * read writes nothing on the side, so `svc_messages` leaves the read position where it is
   * (marking read is conversations.mark_read, a write; spec/1-concepts.md "App sign-in").
   */
  readonly readOnly?: boolean | undefined;
  /**
   * The client reads a tool's structured content alone (at the relay's connector, a 2026-07-28
   * client that declares so): answers that have structured content carry no text (tools/answer.ts).
   */
  readonly structuredOnly?: boolean | undefined;
  /** The tools the server lists (tools/toolsets.ts: SVC_TOOLS, or `?tools=` at the connector); every tool when absent. */
  readonly toolset?: Toolset | undefined;
}
