/**
 * A TCP proxy that holds every chunk for a while in each direction: a database on another
 * machine, for `npm run bench -- appends --store postgres --db-latency <ms>` (this machine's
 * kernel has no netem). `roundTripMs` is what it adds to each round trip, half each way.
 *
 * Node's timers count whole milliseconds (a 0.5 ms timeout fires after 1 ms), so below 2 ms the
 * whole round trip is held on the way to the server and the answer comes back at once: a
 * request and its answer still take `roundTripMs` more, which is what a round trip costs a
 * writer. Chunks keep their order (timers of one duration fire in the order set).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface LatencyProxy {
  /** The port on 127.0.0.1 to connect to instead of the server's. */
  port: number;
  close(): Promise<void>;
}

function forward(from: Socket, to: Socket, holdMs: number): void {
  from.on('data', (chunk) => {
    if (holdMs <= 0) to.write(chunk);
    else setTimeout(() => to.writable && to.write(chunk), holdMs);
  });
  from.on('end', () => setTimeout(() => to.end(), holdMs));
  from.on('error', () => to.destroy());
  from.on('close', () => setTimeout(() => to.destroy(), holdMs));
}

export async function startLatencyProxy(targetHost: string, targetPort: number, roundTripMs: number): Promise<LatencyProxy> {
  const split = roundTripMs >= 2;
  const up = split ? roundTripMs / 2 : roundTripMs;
  const down = split ? roundTripMs / 2 : 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: targetHost, port: targetPort, noDelay: true });
    client.setNoDelay(true);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    forward(client, upstream, up);
    forward(upstream, client, down);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('latency proxy: no port');
  return {
    port: address.port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
