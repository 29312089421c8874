// What the kernel holds of the bytes on loopback TCP connections, for tests
// that judge what a process buffers: a reader that takes nothing leaves the
// bytes in its socket's receive queue and the sender's send queue, which
// autotune up to tcp_rmem / tcp_wmem's maxima (32 and 4 MiB on these
// machines, and other sizes elsewhere), so a count of what was made says
// nothing about the process until these are taken off it.

import { readFile } from 'node:fs/promises';

const ESTABLISHED = '01';

/**
 * Bytes queued in the kernel on established connections to or from `port`
 * (Linux, /proc/net/tcp and tcp6): each socket's sent and not yet
 * acknowledged bytes (tx_queue) plus its received and not yet read ones
 * (rx_queue). Connections to the port from elsewhere count too: idle ones
 * hold nothing.
 */
export async function queuedBytes(port: number): Promise<number> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let total = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue ...
      const [, local, remote, state, queues] = line.trim().split(/\s+/);
      if (state !== ESTABLISHED || !queues) continue;
      if (!local.endsWith(`:${hexPort}`) && !remote.endsWith(`:${hexPort}`)) continue;
      const [tx, rx] = queues.split(':').map((hex) => parseInt(hex, 16));
      total += tx + rx;
    }
  }
  return total;
}
