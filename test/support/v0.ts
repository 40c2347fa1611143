import { admin, call, type ApiResponse, type RequestOptions } from './client.js';
import { system } from './client.js';

/** The team's v0 token, freshly issued (the previous one stops working). */
export async function issueV0Token(teamId: string): Promise<string> {
  const res = await admin('POST', `/teams/${teamId}/v0-token`);
  if (res.status !== 201) throw new Error(`v0 token failed: ${res.status} ${res.text}`);
  return res.body.data.token as string;
}

/** A v0 HTTP call relative to `{v0_base_url}`, the token in `?token=` unless `bearer` is set. */
export function v0(method: string, path: string, token: string | undefined, options: RequestOptions & { bearer?: boolean; base?: string } = {}): Promise<ApiResponse> {
  const { bearer, base, ...rest } = options;
  const query = { ...rest.query, ...(token !== undefined && !bearer ? { token } : {}) };
  return call(`${base ?? system().publicUrl}/api-v0/rundown${path}`, method, { ...rest, query, ...(bearer && token ? { token } : {}) });
}
