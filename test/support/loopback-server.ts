// An HTTP server on loopback for components granted outbound hosts: it
// counts the connections it accepts, answers `reached`, and holds requests to
// /hold until the test lets them go — a call in progress the test can see
// start and decide the end of.

import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

export interface LoopbackServer {
  port: number;
  url: string;
  /**
   * Connections accepted so far (its own probes not counted), once every
   * connection opened before the call has been accepted: the kernel queues
   * them in order, so a probe opened now is accepted after them.
   */
  connections(): Promise<number>;
  /** Requests to /hold that have arrived since the server started. */
  holds(): number;
  /** Resolves once `n` requests to /hold have arrived since the server started. */
  held(n?: number): Promise<void>;
  /** Answers the requests to /hold that wait, with `released`. */
  release(): void;
  close(): Promise<void>;
}

export async function loopbackServer(): Promise<LoopbackServer> {
  /** The remote port of each connection accepted, in order; null for the server's own probes. */
  const accepted: (number | null)[] = [];
  const waiting: ServerResponse[] = [];
  let holds = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/hold') return res.end('reached');
    holds++;
    waiting.push(res);
    server.emit('held');
  });
  server.on('connection', (socket) => {
    accepted.push(socket.remotePort!);
    server.emit('accepted');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async connections() {
      const from = accepted.length;
      const probe = connect(port, '127.0.0.1');
      await once(probe, 'connect');
      let at: number;
      while ((at = accepted.indexOf(probe.localPort!, from)) < 0) await once(server, 'accepted');
      accepted[at] = null;
      probe.destroy();
      return accepted.filter((p) => p !== null).length;
    },
    holds: () => holds,
    async held(n = 1) {
      while (holds < n) await once(server, 'held');
    },
    release() {
      for (const res of waiting.splice(0)) res.end('released');
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
