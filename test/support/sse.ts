import { createParser } from 'eventsource-parser';
import { system } from './client.js';

/** One frame as a client sees it: `event:`, `id:` (undefined when the frame had none) and the parsed `data:`. */
export interface Frame {
  event: string;
  id: string | undefined;
  data: any;
  at: number;
}

export interface OpenOptions {
  token?: string;
  lastEventId?: string;
  events?: string;
  /** Another gateway's v1 base URL. */
  baseUrl?: string;
  headers?: Record<string, string>;
}

/**
 * A real SSE client over HTTP: fetch, a streaming body, eventsource-parser for the wire format. It
 * never reconnects on its own, so a test sees every frame and exactly when the server closes.
 */
export class SseClient {
  readonly frames: Frame[] = [];
  /** Resolves when the server ends the stream (or the connection drops). */
  readonly ended: Promise<void>;
  endedAt: number | undefined;
  private waiters: (() => void)[] = [];
  private readonly abort: AbortController;

  private constructor(
    readonly response: Response,
    abort: AbortController,
  ) {
    this.abort = abort;
    const parser = createParser({
      onEvent: (m) => {
        this.frames.push({ event: m.event ?? 'message', id: m.id, data: JSON.parse(m.data), at: Date.now() });
        for (const w of this.waiters.splice(0)) w();
      },
    });
    this.ended = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted or cut
      }
      this.endedAt = Date.now();
      for (const w of this.waiters.splice(0)) w();
    })();
  }

  /** Opens a stream; a non-2xx answer (problem+json) is returned as such. */
  static async open(rundownId: string, options: OpenOptions = {}): Promise<SseClient> {
    const url = new URL(`${options.baseUrl ?? system().baseUrl}/rundowns/${rundownId}/events`);
    if (options.events !== undefined) url.searchParams.set('events', options.events);
    const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    const abort = new AbortController();
    const response = await fetch(url, { headers, signal: abort.signal });
    return new SseClient(response, abort);
  }

  /** The stream's answer when it was refused (problem+json). */
  async problem(): Promise<any> {
    return JSON.parse(await this.response.text());
  }

  /** Frames of one event name. */
  named(event: string): Frame[] {
    return this.frames.filter((f) => f.event === event);
  }

  /** Frames other than heartbeats. */
  content(): Frame[] {
    return this.frames.filter((f) => f.event !== 'heartbeat');
  }

  /** Waits until `count` frames match (default one), failing after `timeoutMs`. */
  async waitFor(match: (f: Frame) => boolean, count = 1, timeoutMs = 10_000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.filter(match);
      if (found.length >= count) return found;
      if (this.endedAt !== undefined) throw new Error(`stream ended with ${found.length}/${count} matching frames: ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out with ${found.length}/${count} matching frames: ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForEvent(event: string, count = 1, timeoutMs = 10_000): Promise<Frame[]> {
    return this.waitFor((f) => f.event === event, count, timeoutMs);
  }

  /** Waits for the server to end the stream. */
  async waitEnd(timeoutMs = 10_000): Promise<void> {
    await Promise.race([this.ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`stream still open: ${this.describe()}`)), timeoutMs))]);
  }

  close(): void {
    this.abort.abort();
  }

  describe(): string {
    return JSON.stringify(this.frames.map((f) => `${f.event}#${f.id ?? ''}`));
  }
}

/** Opens a stream and waits for its `ready` and `status` snapshot. */
export async function follow(rundownId: string, options: OpenOptions = {}): Promise<SseClient> {
  const client = await SseClient.open(rundownId, options);
  if (client.response.status !== 200) throw new Error(`events answered ${client.response.status}: ${await client.response.text()}`);
  await client.waitForEvent('status');
  return client;
}
