import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1, type ApiResponse } from '../support/client.js';
import { query } from '../support/db.js';
import { expectProblem } from '../support/problems.js';
import { WebhookReceiver, verify, type Received } from '../support/webhook-receiver.js';

// Webhooks (CONTRACT.md §11) end to end: what crosses the services (every event type, made by the
// rundown, cells and runner services, reaching a real receiving HTTP server on loopback, verified by
// the official Standard Webhooks library) and the HTTP contract at the edge. The service's own rules
// (fan-out once, filters, retries and disable, rotation, redirects, SSRF at create and at delivery)
// are its medium tier's: test/medium/webhooks.test.ts.

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
    // The plan edits before the start made timings too; the start's (it may come after the others) has the first cue active.
    const started = (b: { type: string; data: any }) => b.type === 'timing.changed' && b.data.cues.some((c: { id: string; state: string }) => c.id === cues[0]!.id && c.state === 'active');
    await receiver.until(() => receiver.at(path).some((r) => started(verify(hook.secret, r))), 10_000, "the start's timing");
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

  it('keeps the secret sealed at rest; a create retried with its Idempotency-Key answers the same secret', async () => {
    const body = { url: receiver.url(`/sealed-${Date.now()}`), events: ['cue'] };
    const headers = { 'idempotency-key': `sealed-${Date.now()}` };
    const first = await v1('POST', '/webhooks', { token: owner, body, headers });
    const retried = await v1('POST', '/webhooks', { token: owner, body, headers });
    expect([first.status, retried.status]).toEqual([201, 201]);
    expect(retried.body.data).toEqual(first.body.data);
    const rows = await query<{ secret: string }>('SELECT secret FROM webhooks.endpoints WHERE id = $1', [first.body.data.id]);
    expect(rows[0]!.secret).toMatch(/^sealed:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
    expect(rows[0]!.secret).not.toContain(String(first.body.data.secret).slice('whsec_'.length, 20));
  });

  it('speaks the HTTP contract: the secret once, problem+json refusals, 202 for a test and a redelivery, roles and token scope at the edge', async () => {
    const path = `/contract-${Date.now()}`;
    const hook = await createWebhook({ url: receiver.url(path), events: ['cue'] });
    // The secret is never read back; a rotation answers the new one.
    expect(ok(await v1('GET', `/webhooks/${hook.id}`, { token: owner })).secret).toBeUndefined();
    const rotated = ok(await v1('POST', `/webhooks/${hook.id}/secret:rotate`, { token: owner }));
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(ok(await v1('PATCH', `/webhooks/${hook.id}`, { token: owner, body: { enabled: false, description: 'off' } }))).toMatchObject({ enabled: false, description: 'off' });
    expect(ok(await v1('PATCH', `/webhooks/${hook.id}`, { token: owner, body: { enabled: true } }))).toMatchObject({ enabled: true, disabled_reason: null });

    // A test (202, its delivery id is the webhook-id), then a redelivery of it (202, the same webhook-id).
    const sent = ok(await v1('POST', `/webhooks/${hook.id}/test`, { token: owner }), 202);
    const first = await receiver.until(() => receiver.at(path)[0], 10_000, 'the test event');
    expect(first.headers['webhook-id']).toBe(sent.delivery_id);
    expect(verify(rotated.secret, first).type).toBe('webhook.test');
    const logged = await deliveryUntil(hook.id, sent.delivery_id, (d) => d.state === 'delivered');
    expect(logged).toMatchObject({ id: sent.delivery_id, type: 'webhook.test', attempts: 1, last_status: 204 });
    expect(logged.attempt_log.map((a: { status: number }) => a.status)).toEqual([204]);
    ok(await v1('POST', `/webhooks/${hook.id}/deliveries/${sent.delivery_id}:redeliver`, { token: owner }), 202);
    const again = await receiver.until(() => receiver.at(path)[1], 10_000, 'the redelivery');
    expect(again.headers['webhook-id']).toBe(sent.delivery_id);
    expectProblem(await v1('POST', `/webhooks/${hook.id}/deliveries/msg_nope:redeliver`, { token: owner }), 404, 'webhooks.delivery_not_found');
    expectProblem(await v1('GET', `/webhooks/${hook.id}/deliveries/msg_nope`, { token: owner }), 404, 'webhooks.delivery_not_found');

    // Refusals (the rules behind them: test/medium/webhooks.test.ts).
    expectProblem(await v1('POST', '/webhooks', { token: owner, body: { url: 'https://example.com/h', events: ['cue', 'nope'] } }), 400, 'webhooks.invalid_payload');
    const http = await v1('POST', '/webhooks', { token: owner, body: { url: 'http://example.com/h', events: ['cue'] } });
    expectProblem(http, 400, 'webhooks.invalid_url');
    expect(http.body.details).toMatchObject({ reason: 'the URL must be https://' });
    // The service resolves names through the DNS server the system was started with (WEBHOOKS_DNS_SERVERS).
    const loopback = await v1('POST', '/webhooks', { token: owner, body: { url: `https://127-0-0-1.ip.test:${receiver.port}/hook`, events: ['cue'] } });
    expectProblem(loopback, 400, 'webhooks.invalid_url');
    expect(loopback.body.details.reason).toMatch(/127\.0\.0\.1, a loopback address/);
    expectProblem(await v1('GET', '/webhooks/wh_nope', { token: owner }), 404, 'webhooks.not_found');
    // Team scope: a rundown-scoped token sees no endpoint (404), a team EDIT token is refused by role (403).
    const rundown = await createRundown(owner, { title: 'Scoped' });
    const scoped = await team.token('EDIT', { rundown_id: rundown.id });
    for (const [method, route] of [['GET', '/webhooks'], ['POST', '/webhooks'], ['GET', `/webhooks/${hook.id}/deliveries`]] as const) {
      const res = await v1(method, route, { token: scoped, ...(method === 'POST' ? { body: { url: 'https://example.com/h', events: ['cue'] } } : {}) });
      expect([res.status, res.body.code], `${method} ${route}`).toEqual([404, 'webhooks.not_found']);
    }
    const editor = await team.token('EDIT');
    expect((await v1('GET', '/webhooks', { token: editor })).status).toBe(403);
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
});
