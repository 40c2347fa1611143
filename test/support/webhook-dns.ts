import { createSocket } from 'node:dgram';
import { decode, encode, type Answer } from 'dns-packet';

/**
 * A DNS server on loopback for the webhook tests (the webhooks service resolves receivers through
 * it: WEBHOOKS_DNS_SERVERS), answering by the name alone, so a test needs no record set up:
 * - `<a>-<b>-<c>-<d>.ip.test` answers a.b.c.d (`127-0-0-1.ip.test`: a name that resolves to loopback);
 * - `flip-<ms>.ip.test` answers a public address until the epoch ms `<ms>`, then 127.0.0.1: a name
 *   re-pointed after the endpoint was created.
 * Anything else: no address.
 */
export const PUBLIC_ADDRESS = '93.184.216.34';

export function answerFor(name: string, now = Date.now()): string | undefined {
  const dotted = /^(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\.ip\.test$/i.exec(name);
  if (dotted) return dotted.slice(1, 5).join('.');
  const flip = /^flip-(\d+)\.ip\.test$/i.exec(name);
  if (flip) return now < Number(flip[1]) ? PUBLIC_ADDRESS : '127.0.0.1';
  return undefined;
}

export async function startWebhookDns(): Promise<{ address: string; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', (message, remote) => {
    let query;
    try {
      query = decode(message);
    } catch {
      return;
    }
    const answers: Answer[] = [];
    for (const q of query.questions ?? []) {
      const address = q.type === 'A' ? answerFor(q.name) : undefined;
      if (address) answers.push({ type: 'A', name: q.name, ttl: 0, data: address });
    }
    const reply = encode({ type: 'response', id: query.id, flags: 1 << 8 | 1 << 7, questions: query.questions, answers });
    socket.send(reply, remote.port, remote.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
