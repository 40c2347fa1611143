import { Agent, request } from 'undici';
import { TargetRefused, type TargetResolver } from './targets.js';

export interface SendResult {
  /** The receiver's status (undefined: no answer). */
  status: number | undefined;
  /** Why it is not a success (undefined: 2xx). */
  error: string | undefined;
  responseMs: number;
}

/**
 * One POST per attempt through undici (Node's own HTTP client, maintained with Node): every
 * connection's address comes from the target resolver's checked `lookup`, redirects are never
 * followed (a 3xx is an answer like any other, and not a success), at most `responseBytes` of
 * the answer are read before the connection is dropped, and the whole attempt is bounded by
 * `timeoutMs`.
 */
export class Sender {
  private readonly agent: Agent;

  constructor(
    targets: TargetResolver,
    private readonly options: { timeoutMs: number; responseBytes: number },
  ) {
    this.agent = new Agent({
      connect: { lookup: targets.lookup, timeout: Math.min(options.timeoutMs, 10_000) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  async send(url: URL, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'rundown-webhooks/1', ...headers },
        body,
        dispatcher: this.agent,
        signal,
      });
      let read = 0;
      let snippet = '';
      for await (const chunk of res.body) {
        const bytes = chunk as Buffer;
        if (read < this.options.responseBytes) snippet += bytes.subarray(0, this.options.responseBytes - read).toString('utf8');
        read += bytes.length;
        if (read >= this.options.responseBytes) {
          res.body.destroy();
          break;
        }
      }
      const responseMs = Math.round(performance.now() - started);
      if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, error: undefined, responseMs };
      const what = res.statusCode >= 300 && res.statusCode < 400 ? `redirect not followed (HTTP ${res.statusCode})` : `HTTP ${res.statusCode}`;
      return { status: res.statusCode, error: snippet ? `${what}: ${snippet.slice(0, 200)}` : what, responseMs };
    } catch (err) {
      return { status: undefined, error: describe(err, signal), responseMs: Math.round(performance.now() - started) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

function describe(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timeout';
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof TargetRefused) return e.message;
  }
  const error = err as { code?: string; message?: string };
  return [error.code, error.message].filter(Boolean).join(': ') || 'request failed';
}
