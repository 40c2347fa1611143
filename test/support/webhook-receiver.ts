import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What a path answers: a status (and headers), in turn; the last one repeats. */
export type Answer = number | { status: number; headers?: Record<string, string>; delayMs?: number };

/**
 * A real HTTP server on loopback that receives webhooks: it records every request and answers each
 * path as told. `verify` checks a request with the official Standard Webhooks library.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, Answer[]>();
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        receiver.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        for (const wake of receiver.waiters) wake();
        const list = receiver.answers.get(path) ?? [204];
        const answer = list.length > 1 ? list.shift()! : list[0]!;
        const { status, headers, delayMs } = typeof answer === 'number' ? { status: answer, headers: undefined, delayMs: 0 } : answer;
        setTimeout(() => res.writeHead(status, headers).end(status >= 300 ? 'nope' : ''), delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  answer(path: string, ...answers: Answer[]): void {
    this.answers.set(path, answers);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `check` holds over what was received (or fails after `timeoutMs`). */
  async until<T>(check: () => T | undefined | false, timeoutMs = 15_000, what = 'webhooks'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received: ${this.received.map((r) => `${r.path} ${r.body.slice(0, 80)}`).join(' | ')}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
        setTimeout(wake, 100);
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies a received webhook with the official library (throws when it does not verify); answers its parsed body. */
export function verify(secret: string, r: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
}
