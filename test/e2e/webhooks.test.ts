import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1, type ApiResponse } from '../support/client.js';
import { WebhookReceiver, verify, type Received } from '../support/webhook-receiver.js';

// Webhooks (CONTRACT.md §11) end to end: a real receiving HTTP server on loopback (allowed by the
// local defaults), every delivery verified by the official Standard Webhooks library. The e2e
// system runs the webhooks service with retries at 300, 600, 1200, 2400 ms and the disable after
// 3 s of failures (test/support/e2e-setup.ts).

let owner: string;
let receiver: WebhookReceiver;
let team: Awaited<ReturnType<typeof createTeam>>;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  receiver = await WebhookReceiver.start();
});

afterAll(async () => {
  await receiver.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createWebhook(body: Record<string, unknown>, token = owner): Promise<{ id: string; secret: string }> {
  const res = await v1('POST', '/webhooks', { token, body });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(res.headers.get('location')).toMatch(new RegExp(`/v1/webhooks/${res.body.data.id}$`));
  return { id: res.body.data.id, secret: res.body.data.secret };
}

const ok = (res: ApiResponse, status = 200) => {
  expect(res.status, res.text).toBe(status);
  return res.body?.data;
};

async function delivery(webhookId: string, deliveryId: string) {
  return ok(await v1('GET', `/webhooks/${webhookId}/deliveries/${deliveryId}`, { token: owner }));
}

/** Polls a delivery until `check` holds. */
async function deliveryUntil(webhookId: string, deliveryId: string, check: (d: any) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await delivery(webhookId, deliveryId);
    if (check(d)) return d;
    if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} never reached the state wanted: ${JSON.stringify(d)}`);
    await sleep(150);
  }
}

const types = (list: Received[], secret: string) => list.map((r) => verify(secret, r).type);

describe('webhooks', () => {
  it('delivers every event type, each verified by the official library, with rundown_id and event_id', async () => {
    const path = `/all-${Date.now()}`;
    const hook = await createWebhook({ url: receiver.url(path), events: ['*'], description: 'all' });
    const rundown = await createRundown(owner, { title: 'Webhook show', columns: [{ name: 'Script' }], cues: [{ title: 'A', duration_ms: 60_000 }, { title: 'B', duration_ms: 60_000 }] });
    const rid = rundown.id as string;
    const cues = ok(await v1('GET', `/rundowns/${rid}/cues`, { token: owner })).items as { id: string }[];
    const columns = ok(await v1('GET', `/rundowns/${rid}/columns`, { token: owner })).items as { id: string }[];
    ok(await v1('PATCH', `/rundowns/${rid}`, { token: owner, body: { status: 'approved' } }));
    const cue = ok(await v1('POST', `/rundowns/${rid}/cues`, { token: owner, body: { title: 'C', duration_ms: 1_000 } }), 201);
    ok(await v1('PATCH', `/rundowns/${rid}/cues/${cue.id}`, { token: owner, body: { title: 'C2' } }));
    ok(await v1('POST', `/rundowns/${rid}/cues:reorder`, { token: owner, body: { items: [{ id: cue.id, parent_id: null }, ...cues.map((c) => ({ id: c.id, parent_id: null }))] } }));
    ok(await v1('DELETE', `/rundowns/${rid}/cues/${cue.id}`, { token: owner }), 204);
    ok(await v1('POST', `/rundowns/${rid}/columns`, { token: owner, body: { name: 'Notes' } }), 201);
    ok(await v1('PATCH', `/rundowns/${rid}/cells`, { token: owner, body: { cue_id: cues[0]!.id, column_id: columns[0]!.id, content: 'Hello' } }));
    ok(await v1('POST', `/rundowns/${rid}/mentions`, { token: owner, body: { name: 'Anna' } }), 201);
    ok(await v1('POST', `/rundowns/${rid}/text-variables`, { token: owner, body: { key: 'guest', value: 'Ben' } }), 201);
    ok(await v1('PATCH', `/rundowns/${rid}/output-message`, { token: owner, body: { text: 'Standby', visible: true } }));
    ok(await v1('POST', `/rundowns/${rid}/action:start`, { token: owner }));
    ok(await v1('POST', `/webhooks/${hook.id}/test`, { token: owner }), 202);

    const wanted = [
      'rundown.updated',
      'cue.created',
      'cue.updated',
      'cue.reordered',
      'cue.removed',
      'column.created',
      'cell.updated',
      'mention.created',
      'text_variable.created',
      'output_message.updated',
      'status.changed',
      'timing.changed',
      'webhook.test',
    ];
    await receiver.until(() => wanted.every((t) => types(receiver.at(path), hook.secret).includes(t)), 20_000, wanted.join(', '));
    for (const r of receiver.at(path)) {
      const body = verify(hook.secret, r);
      expect(r.headers['content-type']).toBe('application/json');
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(r.headers['webhook-id']).toMatch(/^msg_/);
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
      if (body.type === 'webhook.test') {
        expect(body.data).toMatchObject({ webhook_id: hook.id });
        continue;
      }
      expect(body.data.rundown_id).toBe(rid);
      expect(body.data.event_id).toMatch(/^\d+-\d+$/);
    }
    const byType = new Map(receiver.at(path).map((r) => [verify(hook.secret, r).type, verify(hook.secret, r).data]));
    expect(byType.get('cell.updated')).toMatchObject({ change: 'updated', cue_id: cues[0]!.id, column_id: columns[0]!.id, cell: { content: 'Hello' } });
    expect(byType.get('cue.created')).toMatchObject({ change: 'created', id: cue.id });
    expect(byType.get('status.changed')).toMatchObject({ state: 'running', phase: 'running', active_cue: { id: cues[0]!.id } });
    // The plan edits before the start made timings too; the start's has the first cue active.
    const timings = receiver.at(path).map((r) => verify(hook.secret, r)).filter((b) => b.type === 'timing.changed');
    expect(timings.map((t) => t.data)).toContainEqual(expect.objectContaining({ cues: expect.arrayContaining([expect.objectContaining({ id: cues[0]!.id, state: 'active' })]) }));
    expect(byType.get('text_variable.created')).toMatchObject({ id: 'guest', text_variable: { key: 'guest', value: 'Ben' } });
    // Within a rundown, event_id orders the events (status after the output message it followed).
    const ids = receiver.at(path).map((r) => verify(hook.secret, r)).filter((b) => b.type !== 'webhook.test');
    const position = (type: string) => ids.find((b) => b.type === type)!.data.event_id as string;
    const [om, st] = [position('output_message.updated'), position('status.changed')].map((id) => id.split('-').map(Number));
    expect(om![0]! < st![0]! || (om![0] === st![0] && om![1]! < st![1]!)).toBe(true);

    // The log: every delivery delivered on its first attempt.
    // (An attempt is logged a few ms after its answer, with the others of its batch.)
    let list = ok(await v1('GET', `/webhooks/${hook.id}/deliveries?state=delivered&limit=100`, { token: owner }));
    for (let tries = 0; list.items.length < receiver.at(path).length && tries < 50; tries++) {
      await sleep(100);
      list = ok(await v1('GET', `/webhooks/${hook.id}/deliveries?state=delivered&limit=100`, { token: owner }));
    }
    expect(list.items.length).toBe(receiver.at(path).length);
    for (const d of list.items) expect(d).toMatchObject({ state: 'delivered', attempts: 1, last_status: 204, last_error: null, next_attempt_at: null });
  });

  it('retries a receiver that answers 500 then 200 with the same webhook-id, and the log shows both attempts; redelivers on request', async () => {
    const path = `/flaky-${Date.now()}`;
    receiver.answer(path, 500, 200);
    const hook = await createWebhook({ url: receiver.url(path), events: ['cue'] });
    const rundown = await createRundown(owner, { title: 'Retry show' });
    ok(await v1('POST', `/rundowns/${rundown.id}/cues`, { token: owner, body: { title: 'One' } }), 201);
    const [first, second] = await receiver.until(() => receiver.at(path).length >= 2 && receiver.at(path), 15_000, 'two attempts');
    expect(first!.headers['webhook-id']).toBe(second!.headers['webhook-id']);
    expect(first!.body).toBe(second!.body);
    expect(verify(hook.secret, second!).type).toBe('cue.created');
    // The retry came after the first delay of the schedule (300 ms), not at once.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(250);
    const id = String(first!.headers['webhook-id']);
    const logged = await deliveryUntil(hook.id, id, (d) => d.state === 'delivered');
    expect(logged).toMatchObject({ id, type: 'cue.created', state: 'delivered', attempts: 2, last_status: 200 });
    expect(logged.attempt_log.map((a: { status: number }) => a.status)).toEqual([500, 200]);
    expect(logged.attempt_log[0].error).toMatch(/^HTTP 500/);

    // Redeliver: a third attempt, same webhook-id.
    ok(await v1('POST', `/webhooks/${hook.id}/deliveries/${id}:redeliver`, { token: owner }), 202);
    const third = await receiver.until(() => receiver.at(path)[2], 10_000, 'the redelivery');
    expect(third.headers['webhook-id']).toBe(id);
    verify(hook.secret, third);
    const after = await deliveryUntil(hook.id, id, (d) => d.attempts === 3 && d.state === 'delivered');
    expect(after.attempt_log).toHaveLength(3);
    expect((await v1('POST', `/webhooks/${hook.id}/deliveries/msg_nope:redeliver`, { token: owner })).body.code).toBe('webhooks.delivery_not_found');
  });

  it('disables an endpoint whose deliveries all fail for the configured time, and enabling it again resumes with new events', async () => {
    const path = `/down-${Date.now()}`;
    receiver.answer(path, 503);
    const hook = await createWebhook({ url: receiver.url(path), events: ['cue'] });
    const rundown = await createRundown(owner, { title: 'Disable show' });
    ok(await v1('POST', `/rundowns/${rundown.id}/cues`, { token: owner, body: { title: 'Lost' } }), 201);
    const deadline = Date.now() + 20_000;
    let endpoint = ok(await v1('GET', `/webhooks/${hook.id}`, { token: owner }));
    while (endpoint.enabled && Date.now() < deadline) {
      await sleep(200);
      endpoint = ok(await v1('GET', `/webhooks/${hook.id}`, { token: owner }));
    }
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabled_reason).toMatch(/failed for 3 seconds/);
    // Attempts at 0, 0.3, 0.9, 2.1 and 4.5 s: the one past 3 s of failures disabled it.
    expect(receiver.at(path).length).toBeGreaterThanOrEqual(4);
    const failed = ok(await v1('GET', `/webhooks/${hook.id}/deliveries`, { token: owner })).items;
    expect(failed[0]).toMatchObject({ type: 'cue.created', last_status: 503 });

    // Disabled: new events make no delivery.
    const before = receiver.at(path).length;
    ok(await v1('POST', `/rundowns/${rundown.id}/cues`, { token: owner, body: { title: 'While disabled' } }), 201);
    await sleep(1_000);
    expect(receiver.at(path).length).toBe(before);

    receiver.answer(path, 200);
    const enabled = ok(await v1('PATCH', `/webhooks/${hook.id}`, { token: owner, body: { enabled: true } }));
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null });
    const cue = ok(await v1('POST', `/rundowns/${rundown.id}/cues`, { token: owner, body: { title: 'Back' } }), 201);
    await receiver.until(() => receiver.at(path).some((r) => (verify(hook.secret, r).data as { id?: string }).id === cue.id), 10_000, 'the event after enabling');
  });

  it('signs with both secrets during a rotation', async () => {
    const path = `/rotate-${Date.now()}`;
    const hook = await createWebhook({ url: receiver.url(path), events: ['cue'] });
    const rotated = ok(await v1('POST', `/webhooks/${hook.id}/secret:rotate`, { token: owner }));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    ok(await v1('POST', `/webhooks/${hook.id}/test`, { token: owner }), 202);
    const r = await receiver.until(() => receiver.at(path)[0], 10_000, 'the test event');
    const signatures = String(r.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const s of signatures) expect(s).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // Each secret verifies it alone (a receiver may switch to the new secret any time during the overlap).
    expect(verify(hook.secret, r).type).toBe('webhook.test');
    expect(verify(rotated.secret, r).type).toBe('webhook.test');
    // And each signature is one secret's: with one signature left, only its own secret verifies.
    const only = (i: number): Received => ({ ...r, headers: { ...r.headers, 'webhook-signature': signatures[i] } });
    expect(() => verify(rotated.secret, only(0))).not.toThrow();
    expect(() => verify(hook.secret, only(0))).toThrow();
    expect(() => verify(hook.secret, only(1))).not.toThrow();
    // The secret is never read back.
    expect(ok(await v1('GET', `/webhooks/${hook.id}`, { token: owner })).secret).toBeUndefined();
  });

  it('filters by events and rundown_id', async () => {
    const [r1, r2] = [await createRundown(owner, { title: 'F1', columns: [{ name: 'S' }], cues: [{ title: 'A' }] }), await createRundown(owner, { title: 'F2' })];
    const cuesOnly = `/cues-r1-${Date.now()}`;
    const cellsOnly = `/cells-${Date.now()}`;
    const a = await createWebhook({ url: receiver.url(cuesOnly), events: ['cue'], rundown_id: r1.id });
    const b = await createWebhook({ url: receiver.url(cellsOnly), events: ['cell'] });
    const [c1] = ok(await v1('GET', `/rundowns/${r1.id}/cues`, { token: owner })).items;
    const [col] = ok(await v1('GET', `/rundowns/${r1.id}/columns`, { token: owner })).items;
    const inR1 = ok(await v1('POST', `/rundowns/${r1.id}/cues`, { token: owner, body: { title: 'in r1' } }), 201);
    ok(await v1('POST', `/rundowns/${r2.id}/cues`, { token: owner, body: { title: 'in r2' } }), 201);
    ok(await v1('PATCH', `/rundowns/${r1.id}/cells`, { token: owner, body: { cue_id: c1.id, column_id: col.id, content: 'x' } }));
    ok(await v1('PATCH', `/rundowns/${r1.id}/output-message`, { token: owner, body: { text: 'not subscribed' } }));
    await receiver.until(() => receiver.at(cuesOnly).length >= 1 && receiver.at(cellsOnly).length >= 1, 10_000, 'the filtered events');
    // A moment for anything that should not come to come.
    ok(await v1('POST', `/rundowns/${r1.id}/cues`, { token: owner, body: { title: 'last' } }), 201);
    await receiver.until(() => receiver.at(cuesOnly).length >= 2, 10_000, 'the last cue');
    await sleep(500);
    const got = receiver.at(cuesOnly).map((r) => verify(a.secret, r));
    expect(got.map((g) => [g.type, g.data.rundown_id])).toEqual([
      ['cue.created', r1.id],
      ['cue.created', r1.id],
    ]);
    expect(got[0]!.data.id).toBe(inR1.id);
    expect(receiver.at(cellsOnly).map((r) => verify(b.secret, r).type)).toEqual(['cell.updated']);
  });

  it('sends timing.changed after each plan edit, computed from that edit, and none when an edit leaves the timing as it was', async () => {
    const rd = await createRundown(owner, { title: 'Timed', cues: [{ title: 'A', duration_ms: 60_000 }, { title: 'B', duration_ms: 30_000 }] });
    const path = `/timing-${Date.now()}`;
    const hook = await createWebhook({ url: receiver.url(path), events: ['timing', 'rundown'], rundown_id: rd.id });
    const [a, b] = ok(await v1('GET', `/rundowns/${rd.id}/cues`, { token: owner })).items as { id: string }[];
    const received = () => receiver.at(path).map((r) => verify(hook.secret, r));
    const timings = () => received().filter((t) => t.type === 'timing.changed');
    const planned = (t: { data: any }) => (t.data.cues as { id: string; planned_duration_ms: number }[]).map((c) => [c.id, c.planned_duration_ms]);
    // The runner holds the order from a read before each edit: the timing must not be computed from it.
    for (const duration of [45_000, 20_000, 90_000]) {
      ok(await v1('GET', `/rundowns/${rd.id}/timing`, { token: owner }));
      ok(await v1('PATCH', `/rundowns/${rd.id}/cues/${a!.id}`, { token: owner, body: { duration_ms: duration } }));
      await receiver.until(() => timings().some((t) => planned(t)[0]![1] === duration), 10_000, `the timing with cue A at ${duration} ms`);
    }
    expect(timings().map(planned)).toEqual([45_000, 20_000, 90_000].map((d) => [[a!.id, d], [b!.id, 30_000]]));
    for (const t of timings()) expect(t.data).toMatchObject({ rundown_id: rd.id, event_id: expect.stringMatching(/^\d+-\d+$/), server_time: expect.any(Number), revision: expect.any(Number) });

    // A rundown edit that leaves the timing as it was: its event, and no timing.
    ok(await v1('PATCH', `/rundowns/${rd.id}`, { token: owner, body: { title: 'Timed, renamed' } }));
    await receiver.until(() => received().some((t) => t.type === 'rundown.updated'), 10_000, 'rundown.updated');
    await sleep(500);
    expect(timings()).toHaveLength(3);
  });

  it('validates unknown event names and a non-https URL, and keeps to the team scope and the OWNER role', async () => {
    const bad = await v1('POST', '/webhooks', { token: owner, body: { url: 'https://example.com/h', events: ['cue', 'nope'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('webhooks.invalid_payload');
    const http = await v1('POST', '/webhooks', { token: owner, body: { url: 'http://example.com/h', events: ['cue'] } });
    expect(http.status).toBe(400);
    expect(http.body).toMatchObject({ code: 'webhooks.invalid_url', details: { reason: 'the URL must be https://' } });
    expect((await v1('GET', '/webhooks/wh_nope', { token: owner })).body.code).toBe('webhooks.not_found');
    // Team scope: a rundown-scoped token sees no endpoint (404), a team EDIT token is refused by role (403).
    const rundown = await createRundown(owner, { title: 'Scoped' });
    const scoped = await team.token('EDIT', { rundown_id: rundown.id });
    for (const [method, path] of [['GET', '/webhooks'], ['POST', '/webhooks'], ['GET', '/webhooks/wh_x/deliveries']] as const) {
      const res = await v1(method, path, { token: scoped, ...(method === 'POST' ? { body: { url: 'https://example.com/h', events: ['cue'] } } : {}) });
      expect([res.status, res.body.code], `${method} ${path}`).toEqual([404, 'webhooks.not_found']);
    }
    const editor = await team.token('EDIT');
    expect((await v1('GET', '/webhooks', { token: editor })).status).toBe(403);
  });
});

describe('webhook targets (SSRF)', () => {
  const refused = async (url: string, reason: RegExp) => {
    const res = await v1('POST', '/webhooks', { token: owner, body: { url, events: ['cue'] } });
    expect(res.status, `${url}: ${res.text}`).toBe(400);
    expect(res.body.code).toBe('webhooks.invalid_url');
    expect(res.body.details.reason).toMatch(reason);
  };

  it('refuses at create a name that resolves to loopback, and private, link-local and metadata addresses', async () => {
    await refused(`https://127-0-0-1.ip.test:${receiver.port}/hook`, /127\.0\.0\.1, a loopback address/);
    await refused('https://10-1-2-3.ip.test/hook', /private/);
    await refused('https://10.0.0.1/hook', /private/);
    await refused('https://192.168.1.10/hook', /private/);
    await refused('https://169.254.169.254/latest/meta-data', /link-local/);
    await refused('https://[::1]/hook', /loopback/);
    await refused('https://[::ffff:127.0.0.1]/hook', /loopback/);
    await refused('https://[fd00:ec2::254]/hook', /private/);
    await refused('https://nothing-here.invalid/hook', /does not resolve/);
    // A public address passes (nothing is sent at create).
    const okRes = await v1('POST', '/webhooks', { token: owner, body: { url: 'https://93-184-216-34.ip.test/hook', events: ['cue'] } });
    expect(okRes.status, okRes.text).toBe(201);
    await v1('DELETE', `/webhooks/${okRes.body.data.id}`, { token: owner });
  });

  it('refuses at delivery a name re-pointed to loopback after the create, without connecting', async () => {
    const flipAt = Date.now() + 1_500;
    const name = `flip-${flipAt}.ip.test`;
    const hook = await createWebhook({ url: `https://${name}:${receiver.port}/rebound`, events: ['cue'] });
    await sleep(Math.max(0, flipAt - Date.now()) + 100);
    const sent = ok(await v1('POST', `/webhooks/${hook.id}/test`, { token: owner }), 202);
    const d = await deliveryUntil(hook.id, sent.delivery_id, (x) => x.attempts >= 1 && x.last_error !== null);
    expect(d.last_error).toMatch(/^refused: the URL resolves to 127\.0\.0\.1, a loopback address/);
    expect(d.last_status).toBeNull();
    expect(receiver.at('/rebound')).toHaveLength(0);
  });

  it('does not follow a redirect', async () => {
    const path = `/redirect-${Date.now()}`;
    const target = `/target-${Date.now()}`;
    receiver.answer(path, { status: 302, headers: { location: receiver.url(target) } });
    const hook = await createWebhook({ url: receiver.url(path), events: ['cue'] });
    const sent = ok(await v1('POST', `/webhooks/${hook.id}/test`, { token: owner }), 202);
    const d = await deliveryUntil(hook.id, sent.delivery_id, (x) => x.attempts >= 1 && x.last_status !== null);
    expect(d).toMatchObject({ last_status: 302, state: 'pending' });
    expect(d.last_error).toMatch(/redirect not followed/);
    await sleep(300);
    expect(receiver.at(target)).toHaveLength(0);
    await v1('DELETE', `/webhooks/${hook.id}`, { token: owner });
  });
});
