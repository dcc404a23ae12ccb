/**
 * A transport that passes every message through `inner`, letting the bridge look at (and, where
 * a protocol revision needs it, rewrite) each one on the way: `inbound` sees what the client
 * sent before the server does, `outbound` what the server answers before the client does.
 * The subscription tap and the resource-not-found code of older revisions both stand on it.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';

export interface Taps {
  inbound?: (message: JSONRPCMessage) => JSONRPCMessage;
  outbound?: (message: JSONRPCMessage) => JSONRPCMessage;
}

export function tapTransport(inner: Transport, taps: Taps): Transport {
  const inbound = taps.inbound ?? ((m: JSONRPCMessage) => m);
  const outbound = taps.outbound ?? ((m: JSONRPCMessage) => m);
  return {
    start: () => inner.start(),
    close: () => inner.close(),
    send: (message, options) => inner.send(outbound(message), options),
    setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version),
    get onclose() {
      return inner.onclose;
    },
    set onclose(f) {
      inner.onclose = f;
    },
    get onerror() {
      return inner.onerror;
    },
    set onerror(f) {
      inner.onerror = f;
    },
    get onmessage() {
      return inner.onmessage;
    },
    set onmessage(f) {
      inner.onmessage = f === undefined ? undefined : (message, extra) => f(inbound(message), extra);
    },
  };
}
