import { beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { admin, call, createTeam, system, v1, type TestTeam } from '../support/client.js';
import { expectProblem } from '../support/problems.js';
import { pidListeningOn } from '../support/processes.js';

/** Odd input a demanding client (or a fuzzer) sends: always a clear 4xx, never a 500, nothing stored. */
let team: TestTeam;
let owner: string;
let viewer: string;
let rundown: string;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  viewer = await team.token('VIEW');
  rundown = (await v1('POST', '/rundowns', { token: owner, body: { title: 'Hardening', columns: [{ name: 'Script' }] } })).body.data.id;
});

describe('input PostgreSQL cannot store', () => {
  it('refuses U+0000 in any body string with the route’s invalid_payload code and the path', async () => {
    const cases: [string, string, unknown, string, (string | number)[]][] = [
      ['POST', '/rundowns', { title: 'a\u0000b' }, 'rundowns.invalid_payload', ['title']],
      ['PATCH', `/rundowns/${rundown}`, { settings: { cue_numbering: { prefix: '\u0000' } } }, 'rundowns.invalid_payload', ['settings', 'cue_numbering', 'prefix']],
      ['POST', `/rundowns/${rundown}/columns`, { name: 'x\u0000' }, 'columns.invalid_payload', ['name']],
      ['POST', `/rundowns/${rundown}/mentions`, { name: '\u0000' }, 'mentions.invalid_payload', ['name']],
      ['POST', `/rundowns/${rundown}/text-variables`, { key: 'k', value: 'v\u0000' }, 'text_variables.invalid_payload', ['value']],
      ['PATCH', `/rundowns/${rundown}/output-message`, { text: '\u0000' }, 'messages.invalid_payload', ['text']],
      ['POST', `/rundowns/${rundown}/cues`, { type: 'cue', title: 'ok', subtitle: '\u0000' }, 'cues.invalid_payload', ['subtitle']],
    ];
    for (const [method, path, body, code, at] of cases) {
      const res = await v1(method, path, { token: owner, body });
      expectProblem(res, 400, code);
      expect(res.body.details.issues[0].path, `${method} ${path}`).toEqual(at);
    }
    const adminRes = await admin('POST', '/teams', { name: 'nul\u0000team' });
    expect(adminRes.status).toBe(400);
    expect((await v1('GET', `/rundowns/${rundown}`, { token: owner })).body.data.title).toBe('Hardening');
  });

  it('treats ids that could never be ids (NUL, bad percent-encoding) as not found', async () => {
    expectProblem(await v1('GET', '/rundowns/%00', { token: owner }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', '/rundowns/%00/cues', { token: owner }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', `/rundowns/${rundown}/mentions/%00`, { token: owner }), 404, 'mentions.not_found');
    expectProblem(await v1('DELETE', `/rundowns/${rundown}/mentions/%00`, { token: owner }), 404, 'mentions.not_found');
    // Cell coordinates and scopes (found by the OpenAPI fuzz: a NUL cue_id reached PostgreSQL and answered 500).
    expectProblem(await v1('GET', `/rundowns/${rundown}/cells`, { token: owner, query: { cue_id: '\u0000' } }), 404, 'cues.not_found');
    expectProblem(await v1('GET', `/rundowns/${rundown}/cells`, { token: owner, query: { column_id: '\u0000' } }), 404, 'columns.not_found');
    expectProblem(await v1('GET', `/rundowns/${rundown}/cells`, { token: owner, query: { cue_id: '\u0000', column_id: '\u0000' } }), 404, 'cues.not_found');
    expectProblem(await v1('GET', `/rundowns/${rundown}/reports/%00`, { token: owner }), 404, 'not_found');
    const probe = await v1('GET', '/auth/probe', { token: owner, query: { rundown_id: '\u0000' } });
    expect(probe.body.data).toMatchObject({ visible: false });
    for (const path of ['/rundowns/%zz', '/rundowns/%E2%9C']) {
      expectProblem(await v1('GET', path), 404, 'not_found');
      expectProblem(await v1('GET', path, { token: owner }), 404, 'not_found');
    }
  });

  it('answers every route of the document with a catalogue 4xx for any id however malformed, before it travels inward', async () => {
    expectProblem(await v1('GET', `/rundowns/${rundown}%00/cells`, { token: owner }), 404, 'rundowns.not_found');
    const doc = (await v1('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const malformed = ['%00', 'a%0Ab', 'x'.repeat(65), '%F0%9F%98%80'.repeat(40), `${rundown}%7F`];
    let checked = 0;
    for (const [template, operations] of Object.entries(doc.paths)) {
      const params = [...template.matchAll(/\{(\w+)\}/g)].map(([, name]) => name!);
      for (const method of Object.keys(operations).filter((m) => ['get', 'post', 'patch', 'delete'].includes(m))) {
        for (const param of params) {
          for (const bad of malformed) {
            const path = template.replace(/\{(\w+)\}/g, (_, name: string) => (name === param ? bad : name === 'id' ? rundown : 'x1')).replace(/^\/v1/, '');
            const res = await v1(method.toUpperCase(), path, { token: owner, body: method === 'get' || method === 'delete' ? undefined : {} });
            const what = `${method} ${template} with ${param} = ${bad.slice(0, 20)}`;
            expect(res.status, what).toBeGreaterThanOrEqual(400);
            expect(res.status, what).toBeLessThan(500);
            expect(res.body?.code, what).toMatch(/not_found|invalid_payload/);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('refuses a cue_numbering.start_from outside 0..1,000,000 before storing anything', async () => {
    for (const start_from of [2_147_483_648, -1, 1_000_001]) {
      const patch = await v1('PATCH', `/rundowns/${rundown}`, { token: owner, body: { settings: { cue_numbering: { start_from } } } });
      expectProblem(patch, 400, 'rundowns.invalid_payload');
      const create = await v1('POST', '/rundowns', { token: owner, body: { title: 'big', settings: { cue_numbering: { start_from } } } });
      expectProblem(create, 400, 'rundowns.invalid_payload');
    }
    expect((await v1('GET', `/rundowns/${rundown}`, { token: owner })).status).toBe(200);
    expect((await v1('GET', '/rundowns', { token: owner })).status).toBe(200);
  });
});

describe('edge semantics', () => {
  it('resets every setting with settings: null (RFC 7396)', async () => {
    const id = (await v1('POST', '/rundowns', { token: owner, body: { title: 'reset', settings: { cue_numbering: { prefix: 'A', padding: 3 }, tod_display_format: '24h' } } })).body.data.id;
    const res = await v1('PATCH', `/rundowns/${id}`, { token: owner, body: { settings: null } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.settings).toEqual({ cue_numbering: { start_from: 1, prefix: '', padding: 1 }, tod_display_format: null });
  });

  it('judges the role before the body, and never replays another token’s answer to a token that may not write', async () => {
    expectProblem(await v1('POST', `/rundowns/${rundown}/cues`, { token: viewer, body: { duration_ms: -1 } }), 403, 'forbidden');
    expectProblem(await v1('PATCH', `/rundowns/${rundown}`, { token: viewer, body: {} }), 403, 'forbidden');
    const key = `replay-${Date.now()}`;
    const created = await v1('POST', '/rundowns', { token: owner, body: { title: 'Keyed' }, headers: { 'idempotency-key': key } });
    expect(created.status).toBe(201);
    const stolen = await v1('POST', '/rundowns', { token: viewer, body: { title: 'Keyed' }, headers: { 'idempotency-key': key } });
    expectProblem(stolen, 403, 'forbidden');
    expect(stolen.headers.get('idempotent-replayed')).toBeNull();
  });

  it('charges a valid token’s unknown path or wrong method to its team, not to the address', async () => {
    const notFound = await v1('GET', '/nowhere', { token: owner });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('ratelimit-limit')).toBe('100000');
    const wrongMethod = await v1('DELETE', '/auth', { token: owner });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('ratelimit-limit')).toBe('100000');
    expect((await v1('GET', '/nowhere')).headers.get('ratelimit-limit')).not.toBe('100000');
  });

  it('matches paths case-sensitively everywhere (no self-contradicting 405)', async () => {
    expectProblem(await v1('GET', '/Auth', { token: owner }), 404, 'not_found');
    expectProblem(await v1('POST', '/Rundowns', { token: owner, body: { title: 'x' } }), 404, 'not_found');
  });

  it('routes v1 paths as it always has: one trailing slash, HEAD, parameters percent-decoded, literals as sent, 404 and 405 from the fallback', async () => {
    const status = `/rundowns/${rundown}/status`;
    const plain = await v1('GET', status, { token: owner });
    expect(plain.status, plain.text).toBe(200);
    const same = { ...plain.body.data, server_time: expect.any(Number) };
    expect((await v1('GET', `${status}/`, { token: owner })).body.data).toEqual(same);
    expect((await call(`${system().publicUrl}/V1${status}`, 'GET', { token: owner })).body.data).toEqual(same);
    const head = await v1('HEAD', status, { token: owner });
    expect([head.status, head.text, head.headers.get('content-type')]).toEqual([200, '', 'application/json; charset=utf-8']);
    // A parameter is decoded (the same rundown, however spelled); a literal is matched as sent, so an
    // encoded letter or colon names no route, and a parameter never spans a '/'.
    const spelled = `%${rundown.charCodeAt(0).toString(16).toUpperCase()}${rundown.slice(1)}`;
    expect((await v1('GET', `/rundowns/${spelled}/status`, { token: owner })).body.data).toEqual(same);
    expectProblem(await v1('GET', `/rundowns/${rundown}%2Fx/status`, { token: owner }), 404, 'rundowns.not_found');
    expectProblem(await v1('GET', `/rundowns/${rundown}/st%61tus`, { token: owner }), 404, 'not_found');
    expectProblem(await v1('POST', `/rundowns/${rundown}/action%3Astart`, { token: owner }), 404, 'not_found');
    expectProblem(await v1('GET', `${status}//`, { token: owner }), 404, 'not_found');
    // The literal colon: action:start takes POST only; status takes GET (and so HEAD).
    const get = await v1('GET', `/rundowns/${rundown}/action:start`, { token: owner });
    expectProblem(get, 405, 'method_not_allowed');
    expect(get.headers.get('allow')).toBe('POST');
    const post = await v1('POST', status, { token: owner });
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    // A route's own failure reaches the problem handler.
    expectProblem(await v1('GET', '/rundowns/rd_missing/status', { token: owner }), 404, 'rundowns.not_found');
  });

  it('answers OPTIONS itself: 204 with Allow and the RateLimit headers, 404 on an unknown path', async () => {
    const res = await v1('OPTIONS', '/rundowns');
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS, POST');
    expect(res.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expectProblem(await v1('OPTIONS', '/nowhere'), 404, 'not_found');
  });

  it('reads no body on a GET', async () => {
    // fetch refuses to send a body with GET; a raw request does what some clients do.
    const url = new URL(`${system().baseUrl}/auth`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'GET', headers: { authorization: `Bearer ${owner}`, 'content-type': 'text/plain', 'content-length': '1' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{');
    });
    expect(status).toBe(200);
  });

  it('refuses a body that is not UTF-8, or carries a content coding, instead of storing something else', async () => {
    const json = { 'content-type': 'application/json' };
    // 0xFF 0xFE can never appear in UTF-8; decoding them leniently would store U+FFFD twice.
    const latin = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const invalid = await v1('PATCH', `/rundowns/${rundown}`, { token: owner, rawBody: latin, headers: json });
    expectProblem(invalid, 400, 'bad_request');
    expect(invalid.body.details.issues[0]).toMatchObject({ path: [], code: 'invalid_utf8' });
    expectProblem(await v1('POST', '/rundowns', { token: owner, rawBody: latin, headers: json }), 400, 'bad_request');
    // The body is plain JSON but declared gzip: it must not be read as if the header were absent.
    const coded = await v1('PATCH', `/rundowns/${rundown}`, { token: owner, rawBody: '{"title":"coded"}', headers: { ...json, 'content-encoding': 'gzip' } });
    expectProblem(coded, 415, 'unsupported_media_type');
    expect((await v1('GET', `/rundowns/${rundown}`, { token: owner })).body.data.title).toBe('Hardening');
    const identity = await v1('PATCH', `/rundowns/${rundown}/output-message`, { token: owner, rawBody: '{"text":"ok"}', headers: { ...json, 'content-encoding': 'identity' } });
    expect(identity.status).toBe(200);
  });

  it('answers a PATCH whose body is JSON null as an empty patch', async () => {
    expectProblem(await v1('PATCH', `/rundowns/${rundown}/output-message`, { token: owner, rawBody: 'null', headers: { 'content-type': 'application/json' } }), 422, 'messages.empty_patch');
    const create = await v1('POST', '/rundowns', { token: owner, rawBody: 'null', headers: { 'content-type': 'application/json' } });
    expectProblem(create, 400, 'rundowns.invalid_payload');
    expect(create.body.details.issues[0].path).toEqual([]);
  });
});

describe('clients that vanish mid-connection', () => {
  /** Opens a WebSocket upgrade of the v0 socket path through the gateway and resets it (TCP RST) once it is proxied. */
  function upgradeThenReset(publicUrl: URL, at: 'after-101' | 'before-101'): Promise<void> {
    return new Promise((resolve) => {
      const socket = connect({ host: publicUrl.hostname, port: Number(publicUrl.port) }, () => {
        socket.write(
          [
            'GET /api-v0/socket.io/?EIO=4&transport=websocket HTTP/1.1',
            `Host: ${publicUrl.host}`,
            'Connection: Upgrade',
            'Upgrade: websocket',
            'Sec-WebSocket-Version: 13',
            `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
            '',
            '',
          ].join('\r\n'),
        );
        if (at === 'before-101') setTimeout(() => socket.resetAndDestroy(), 1);
      });
      socket.on('data', (chunk: Buffer) => {
        if (at === 'after-101' && chunk.toString('latin1').startsWith('HTTP/1.1 101')) socket.resetAndDestroy();
      });
      // Its own end of the reset may be reported as an error: either way the connection is gone.
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
  }

  it('a v0 WebSocket reset by its client (ECONNRESET) ends that socket only; the gateway keeps serving', async () => {
    const publicUrl = new URL(system().publicUrl);
    const gateway = pidListeningOn(Number(publicUrl.port));
    for (let i = 0; i < 20; i++) await upgradeThenReset(publicUrl, i % 2 ? 'after-101' : 'before-101');
    // A crash would show as a refused connection now and a new process after the supervisor's restart.
    await new Promise((r) => setTimeout(r, 300));
    expect((await v1('GET', `/rundowns/${rundown}`, { token: viewer })).status).toBe(200);
    expect(pidListeningOn(Number(publicUrl.port)), 'the same gateway process').toBe(gateway);
  });
});
