/**
 * Connections when the relay stops. Node's `server.close()` ends keep-alive connections that sit
 * between requests, but a connection that is open with no request on it yet (a client's pool
 * opened it ahead, or a request's headers are still arriving) counts as busy, and the close
 * then waits for Node's header timeout, a minute or more. Fastify's `forceCloseConnections:
 * true` would end those, and every request still running with them (a long poll's answer, a
 * write's receipt).
 *
 * So the relay tracks, per connection, whether a request is being answered on it and how many
 * bytes it had read when its last answer ended. When the app closes (the preClose hook, after
 * the live streams have been told to end), a connection with no request in flight that has
 * read nothing since is ended at once; one whose next request is still arriving gets
 * `ARRIVING_GRACE_MS` to become a request; a request in flight is answered in full (Fastify
 * marks that answer `Connection: close`, which ends its connection after it).
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How long a request whose headers are still arriving when the relay stops may take to arrive. */
export const ARRIVING_GRACE_MS = 1_000;

export function endQuietConnectionsOnClose(app: FastifyInstance): void {
  const busy = new Map<Socket, number>();
  /** Every open connection and its `bytesRead` when its last answer ended. */
  const open = new Map<Socket, number>();
  let closing = false;
  app.server.on('connection', (socket: Socket) => {
    open.set(socket, 0);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  app.server.on('request', (req, res) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    // `on`, not `once`: a response closes once, and once's wrapper and removal cost every request.
    res.on('close', () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
      if (open.has(socket)) open.set(socket, socket.bytesRead);
      // A connection whose last answer ends while the relay stops is ended with it.
      if (closing && left <= 0) socket.destroySoon();
    });
  });
  app.addHook('preClose', async () => {
    closing = true;
    const arriving: Socket[] = [];
    for (const [socket, readAtLastAnswer] of open) {
      if (busy.has(socket)) continue;
      if (socket.bytesRead === readAtLastAnswer) socket.destroy();
      else arriving.push(socket);
    }
    if (arriving.length > 0) {
      setTimeout(() => {
        for (const socket of arriving) if (!busy.has(socket)) socket.destroy();
      }, ARRIVING_GRACE_MS).unref();
    }
  });
}
