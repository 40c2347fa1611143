import { inject } from 'vitest';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  query?: Record<string, string | string[]>;
}

/** A plain HTTP client, as an integration would write one: fetch, JSON, nothing clever. */
export async function call<T = any>(url: string, method: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const target = new URL(url);
  for (const [key, value] of Object.entries(options.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) target.searchParams.append(key, v);
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(target, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export function system() {
  return inject('system');
}

/** v1 call relative to the base URL. */
export function v1<T = any>(method: string, path: string, options: RequestOptions = {}) {
  return call<T>(`${system().baseUrl}${path}`, method, options);
}

/** Admin call relative to /admin, authenticated with the admin secret. */
export function admin<T = any>(method: string, path: string, body?: unknown) {
  const s = system();
  return call<T>(`${s.adminUrl}${path}`, method, { token: s.adminSecret, ...(body !== undefined ? { body } : {}) });
}

export interface TestTeam {
  id: string;
  token(role?: 'VIEW' | 'SHOWCALL' | 'EDIT' | 'OWNER', extra?: Record<string, unknown>): Promise<string>;
}

/** A fresh team (paid with a generous rate limit unless told otherwise) and a way to mint its tokens. */
export async function createTeam(fields: Record<string, unknown> = {}): Promise<TestTeam> {
  const created = await admin('POST', '/teams', { name: `team-${Math.random().toString(36).slice(2, 8)}`, plan: 'paid', rate_limit_per_minute: 100_000, ...fields });
  if (created.status !== 201) throw new Error(`team create failed: ${created.status} ${created.text}`);
  const id = created.body.data.id as string;
  return {
    id,
    token: async (role = 'OWNER', extra = {}) => {
      const minted = await admin('POST', `/teams/${id}/tokens`, { role, ...extra });
      if (minted.status !== 201) throw new Error(`mint failed: ${minted.status} ${minted.text}`);
      return minted.body.data.token as string;
    },
  };
}

/** Creates a rundown as a client would and answers its record; anything but 201 fails the test. */
export async function createRundown(token: string, body: Record<string, unknown>): Promise<any> {
  const res = await v1('POST', '/rundowns', { token, body });
  if (res.status !== 201) throw new Error(`rundown create failed: ${res.status} ${res.text}`);
  return res.body.data;
}

export const REQUEST_ID = /^req_[0-9a-f]{24}$/;
