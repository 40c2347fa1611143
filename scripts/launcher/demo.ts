// The demo team and its OWNER token, made through the admin API (docs/api-decisions.md#admin) and remembered in
// <DATA_DIR>/demo.json so a second start prints the same token.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { errorCode, errorMessage, isRecord, LauncherError, log, writeFileAtomic } from './util.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Demo {
  teamId: string;
  token: string;
  tokenId: string | undefined;
  /** ms since the epoch (docs/api-decisions.md#envelope). */
  expiresAt: number;
}

export interface DemoOptions {
  dataDir: string;
  /** e.g. http://127.0.0.1:8081/admin */
  adminUrl: string;
  adminSecret: string;
  /** e.g. http://127.0.0.1:8080/v1, to check that a remembered token is still accepted. */
  v1Url: string;
}

interface Answer {
  status: number;
  body: unknown;
}

async function request(url: string, init: { method: string; bearer: string; body?: unknown }): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method,
      headers: {
        authorization: `Bearer ${init.bearer}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new LauncherError(`${init.method} ${url} failed: ${errorMessage(error instanceof Error ? (error.cause ?? error) : error)}`);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON; keep the text for the error message
  }
  return { status: response.status, body };
}

/** `data` of a v1 envelope. */
function data(answer: Answer): Record<string, unknown> {
  if (isRecord(answer.body) && isRecord(answer.body.data)) return answer.body.data;
  throw new LauncherError(`unexpected admin API answer: ${JSON.stringify(answer.body)}`);
}

function field(record: Record<string, unknown>, name: string): string {
  const value = record[name];
  if (typeof value === 'string' && value !== '') return value;
  throw new LauncherError(`admin API answer lacks ${name}: ${JSON.stringify(record)}`);
}

/** expires_at is ms since the epoch (docs/api-decisions.md#envelope); an ISO string is accepted too. */
function expiry(value: unknown): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new LauncherError(`admin API answer has no usable expires_at: ${JSON.stringify(value)}`);
  return ms;
}

function fail(what: string, answer: Answer): never {
  const detail = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  throw new LauncherError(`${what}: HTTP ${answer.status}`, detail);
}

async function readSaved(file: string): Promise<Demo | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (!isRecord(parsed)) return undefined;
    const { team_id, token, token_id, expires_at } = parsed;
    if (typeof team_id !== 'string' || typeof token !== 'string' || typeof expires_at !== 'number') return undefined;
    return { teamId: team_id, token, tokenId: typeof token_id === 'string' ? token_id : undefined, expiresAt: expires_at };
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') log(`ignoring unreadable ${file}: ${errorMessage(error)}`);
    return undefined;
  }
}

export async function ensureDemo(options: DemoOptions): Promise<Demo & { reused: boolean }> {
  const file = path.join(options.dataDir, 'demo.json');
  const admin = (method: string, route: string, body?: unknown): Promise<Answer> =>
    request(`${options.adminUrl}${route}`, { method, bearer: options.adminSecret, body });

  const saved = await readSaved(file);
  let teamId: string | undefined;
  if (saved !== undefined) {
    const team = await admin('GET', `/teams/${encodeURIComponent(saved.teamId)}`);
    if (team.status === 200) teamId = saved.teamId;
    else if (team.status !== 404) fail(`GET /admin/teams/${saved.teamId}`, team);
  }

  if (saved !== undefined && teamId !== undefined && saved.expiresAt - Date.now() > DAY_MS) {
    // Also ask the public API: a token signed with keys that have since changed must be replaced.
    const probe = await request(`${options.v1Url}/auth`, { method: 'GET', bearer: saved.token });
    if (probe.status !== 401) return { ...saved, reused: true };
  }

  if (teamId === undefined) {
    // Paid, so a newcomer trying things by hand does not meet the free plan's 20 requests a minute.
    const created = await admin('POST', '/teams', { name: 'Demo', plan: 'paid' });
    if (created.status !== 201 && created.status !== 200) fail('POST /admin/teams', created);
    teamId = field(data(created), 'id');
    log(`created demo team ${teamId}`);
  }
  const minted = await admin('POST', `/teams/${encodeURIComponent(teamId)}/tokens`, { role: 'OWNER', name: 'demo' });
  if (minted.status !== 201 && minted.status !== 200) fail(`POST /admin/teams/${teamId}/tokens`, minted);
  const tokenData = data(minted);
  const demo: Demo = {
    teamId,
    token: field(tokenData, 'token'),
    tokenId: typeof tokenData.id === 'string' ? tokenData.id : undefined,
    expiresAt: expiry(tokenData.expires_at),
  };
  log(`minted a demo OWNER token for team ${teamId}`);
  const record = { team_id: demo.teamId, token: demo.token, token_id: demo.tokenId, expires_at: demo.expiresAt };
  await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, 0o600);
  return { ...demo, reused: false };
}
