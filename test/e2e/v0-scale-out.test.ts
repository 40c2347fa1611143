import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1 } from '../support/client.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';
import { startRealtime, v0Secret, type ExtraRealtime } from '../support/realtime.js';
import { connected, v0Socket, type V0Client } from '../support/sockets.js';
import { issueV0Token, v0 } from '../support/v0.js';

// Two realtime replicas behind one entry (a gateway whose public port proxies /api-v0/socket.io to
// both, sticky by session): clients spread over both get every event exactly once and in order;
// one replica killed, its clients reconnect to the other and follow the show again.

let a: ExtraRealtime;
let b: ExtraRealtime;
let entry: ExtraGateway;
const clients: V0Client[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startRealtime('rt-a'), startRealtime('rt-b')]);
  entry = await startGateway({ REALTIME_URLS: `rt-a=${a.url},rt-b=${b.url}`, V0_TOKEN_SECRET: await v0Secret() });
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await entry?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
});

const nodeOf = (c: V0Client) => c.socket.io.engine.id.split('.')[0];

describe('two realtime replicas behind one entry', () => {
  it('spread clients receive every event exactly once, in order; a killed replica’s clients resume on the other', async () => {
    const team = await createTeam();
    const owner = await team.token('OWNER');
    const token = await issueV0Token(team.id);
    const rundown = await createRundown(owner, {
      title: 'Scale-out',
      cues: Array.from({ length: 6 }, (_, i) => ({ title: `Cue ${i + 1}`, duration_ms: 60_000 + i * 1_000 })),
    });
    for (let i = 0; i < 12; i++) {
      const c = v0Socket(rundown.id, token, { url: entry.publicUrl, transports: i % 2 ? ['websocket'] : ['polling', 'websocket'], reconnection: true });
      clients.push(c);
      await connected(c);
    }
    const byNode = (node: string) => clients.filter((c) => nodeOf(c) === node);
    expect(byNode('rt-a').length).toBeGreaterThan(0);
    expect(byNode('rt-b').length).toBeGreaterThan(0);
    expect(byNode('rt-a').length + byNode('rt-b').length).toBe(clients.length);
    for (const c of clients) await c.next('serverTime'); // joined: serverTime alone at connect

    // Ten changes through both APIs.
    const actions: (() => Promise<{ status: number }>)[] = [
      () => v0('GET', `/${rundown.id}/start`, token),
      () => v1('POST', `/rundowns/${rundown.id}/action:next`, { token: owner }),
      () => v0('GET', `/${rundown.id}/next`, token),
      () => v0('GET', `/${rundown.id}/cues/active/add`, token, { query: { amount: '1500' } }),
      () => v1('POST', `/rundowns/${rundown.id}/action:pause`, { token: owner }),
      () => v0('GET', `/${rundown.id}/start`, token),
      () => v0('GET', `/${rundown.id}/previous`, token),
      () => v1('POST', `/rundowns/${rundown.id}/action:adjust-duration`, { token: owner, body: { delta_ms: -500 } }),
      () => v0('GET', `/${rundown.id}/next`, token),
      () => v0('GET', `/${rundown.id}/next`, token),
    ];
    for (const act of actions) expect((await act()).status).toBe(200);
    await Promise.all(clients.map((c) => c.next('timesnap', actions.length, 10_000)));
    await new Promise((r) => setTimeout(r, 500)); // anything duplicated would have arrived by now
    const reference = clients[0]!.received.map((r) => [r.event, r.payload]).filter(([e]) => e !== 'serverTime');
    expect(reference.filter(([e]) => e === 'timesnap')).toHaveLength(10);
    for (const c of clients) {
      expect(c.received.map((r) => [r.event, r.payload]).filter(([e]) => e !== 'serverTime')).toEqual(reference);
    }
    const snaps = reference.filter(([e]) => e === 'timesnap').map(([, p]) => p);
    const s = (await v1('GET', `/rundowns/${rundown.id}/status`, { token: owner })).body.data;
    expect(snaps.at(-1)).toEqual({ lastStop: null, kickoff: s.active_cue.started_at, running: true, cueId: s.active_cue.id, deadline: s.active_cue.started_at + s.active_cue.duration_ms });

    // Kill replica a: its clients drop and reconnect through the entry to b, which sends serverTime alone.
    const moved = byNode('rt-a');
    const before = moved.map((c) => c.of('serverTime').length);
    await a.kill();
    await Promise.all(moved.map((c, i) => c.next('serverTime', before[i]! + 1, 20_000)));
    for (const c of moved) {
      expect(nodeOf(c)).toBe('rt-b');
      expect(c.received.at(-1)!.event).toBe('serverTime');
    }
    // And they follow the show from there, exactly once like everyone else.
    const counts = clients.map((c) => c.of('timesnap').length);
    expect((await v0('GET', `/${rundown.id}/pause`, token)).status).toBe(200);
    expect((await v0('GET', `/${rundown.id}/previous`, token)).status).toBe(200);
    await Promise.all(clients.map((c, i) => c.next('timesnap', counts[i]! + 2, 10_000)));
    await new Promise((r) => setTimeout(r, 500));
    const final = (await v1('GET', `/rundowns/${rundown.id}/status`, { token: owner })).body.data;
    for (const [i, c] of clients.entries()) {
      expect(c.of('timesnap')).toHaveLength(counts[i]! + 2);
      expect(c.of('timesnap').at(-1)).toEqual({ lastStop: null, kickoff: final.active_cue.started_at, running: true, cueId: final.active_cue.id, deadline: final.active_cue.started_at + final.active_cue.duration_ms });
    }
  }, 90_000);
});
