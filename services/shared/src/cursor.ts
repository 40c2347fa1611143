import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from './errors/app-error.js';

/**
 * Opaque, tamper-proof page cursors: the position (sort key + id) and what it is bound to, MAC'd
 * with a server secret. A cursor altered, truncated or minted for another list is refused.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(scope: string, position: Record<string, string>): string {
    const body = Buffer.from(JSON.stringify({ s: scope, p: position })).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  decode(scope: string, cursor: string): Record<string, string> {
    const [body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined) throw invalid();
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { s?: string; p?: Record<string, string> };
    if (parsed.s !== scope || typeof parsed.p !== 'object' || parsed.p === null) throw invalid();
    return parsed.p;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url').slice(0, 22);
  }
}

function invalid(): AppError {
  return new AppError('cursor.invalid');
}
