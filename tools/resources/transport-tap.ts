/**
 * A transport that passes every message through `inner`, letting the bridge look at (and, where
 * a protocol revision needs it, rewrite) each one on the way: `inbound` sees what the client
 * sent before the server does, `outbound` what the server answers before the client does.
 * `inbound` may also keep a message from the server (it returns undefined), having answered it
 * itself. The subscription tap, the resource-not-found code of older revisions and the params
 * check (tools/params.ts) all stand on it.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';

export interface Taps {
  /** The message the server is to see, or undefined to hand it nothing. */
  inbound?: (message: JSONRPCMessage) => JSONRPCMessage | undefined;
  outbound?: (message: JSONRPCMessage) => JSONRPCMessage;
}

export function tapTransport(inner: Transport, taps: Taps): Transport {
  const inbound = taps.inbound ?? ((m: JSONRPCMessage): JSONRPCMessage | undefined => m);
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
      inner.onmessage =
        f === undefined
          ? undefined
          : (message, extra) => {
              const seen = inbound(message);
              if (seen !== undefined) f(seen, extra);
            };
    },
  };
}
