/**
 * The setup of the bridge tests that stand a proxy between bridge and relay (bridge-posting,
 * bridge-tamper): a real relay whose public URL is a small real HTTP proxy (test/helpers/proxy.ts),
 * one real svc-bridge process (KEY A) reaching the relay through it, and one KEY P that speaks
 * plain HTTP. The proxy lets a test lose or change what the relay said.
 */
import { callTool, startBridge, tempHome, toolOk, type RunningBridge } from './bridge.js';
import { admit } from './posts.js';
import { startProxy, type RunningProxy } from './proxy.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from './relay.js';
import { freshName } from './spaces.js';

export interface ProxiedBridge {
  readonly proxy: RunningProxy;
  readonly relay: RunningRelay;
  /** KEY A's bridge, reaching the relay through the proxy. */
  readonly a: RunningBridge;
  readonly homeA: string;
  /** KEY A's svc_whoami answer (peer id, run id). */
  readonly whoami: Record<string, any>;
  /** KEY P, over plain HTTP. */
  readonly p: MintedToken;
}

/** Start proxy, relay and bridge; what was started is closed again if a later step fails. */
export async function startProxiedBridge(): Promise<ProxiedBridge> {
  const proxy = await startProxy();
  let relay: RunningRelay | undefined;
  let a: RunningBridge | undefined;
  try {
    relay = await startRelay({ publicUrl: proxy.url });
    proxy.target = relay.url;
    const homeA = tempHome();
    a = await startBridge({ relayUrl: proxy.url, home: homeA });
    const whoami = toolOk(await callTool(a, 'svc_whoami', {}));
    const p = await mintToken(relay.url);
    return { proxy, relay, a, homeA, whoami, p };
  } catch (e) {
    await closeProxiedBridge({ proxy, relay, a });
    throw e;
  }
}

/** Close bridge, proxy and relay, whichever were started. */
export async function closeProxiedBridge(parts: { proxy?: RunningProxy; relay?: RunningRelay; a?: RunningBridge }): Promise<void> {
  await parts.a?.close();
  await parts.proxy?.close();
  await parts.relay?.close();
}

/** A private SPACE made by KEY A through the tool (`opts` go to create), with P admitted as writer. */
export async function spaceWithPeer(setup: ProxiedBridge, prefix: string, opts: Record<string, unknown> = {}): Promise<string> {
  const name = freshName(prefix);
  toolOk(await callTool(setup.a, 'svc_space_control', { action: 'create', name, ...opts }));
  await admit(setup.relay, (await setup.relay.store.spaces.byName(name))!, setup.p, 'writer');
  return name;
}
