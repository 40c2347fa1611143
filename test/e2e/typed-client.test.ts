import { describe, expect, it } from 'vitest';
import { createTeam } from '../support/client.js';
import { typedClient } from '../support/typed-client.js';

/**
 * A client generated from the served API's OpenAPI document (openapi-typescript + openapi-fetch)
 * runs a show: create a rundown, add a cue, start, read the status; and it reads a refusal as the
 * document describes it (a problem document with a catalogue code).
 */
describe('the typed client generated from the OpenAPI document', () => {
  it('creates a rundown, adds a cue, starts the show and reads its status', async () => {
    const team = await createTeam();
    const api = typedClient(await team.token('OWNER'));

    const created = await api.POST('/rundowns', { body: { title: 'Typed client', timezone: 'Europe/Berlin', cues: [{ title: 'Opening', duration_ms: 60_000 }] } });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const rundown = created.data!.data;
    expect(rundown.title).toBe('Typed client');
    expect(rundown.timezone).toBe('Europe/Berlin');

    const added = await api.POST('/rundowns/{id}/cues', {
      params: { path: { id: rundown.id } },
      body: { title: 'Weather', duration_ms: 90_000, position: { end: true } },
    });
    expect(added.response.status, JSON.stringify(added.error)).toBe(201);
    const weather = added.data!.data;
    expect(weather).toMatchObject({ title: 'Weather', duration_ms: 90_000, type: 'cue', scheduled: false });

    const cues = await api.GET('/rundowns/{id}/cues', { params: { path: { id: rundown.id } } });
    expect(cues.data!.data.items.map((cue) => cue.title)).toEqual(['Opening', 'Weather']);

    const started = await api.POST('/rundowns/{id}/action:start', { params: { path: { id: rundown.id } } });
    expect(started.response.status, JSON.stringify(started.error)).toBeLessThan(300);

    const status = await api.GET('/rundowns/{id}/status', { params: { path: { id: rundown.id } } });
    expect(status.response.status).toBe(200);
    const { state, active_cue, next_cue } = status.data!.data;
    expect(state).toBe('running');
    expect(active_cue?.title).toBe('Opening');
    expect(next_cue).toEqual({ id: weather.id, title: 'Weather' });
  });

  it('reads a refusal as the problem document the operation documents', async () => {
    const team = await createTeam();
    const api = typedClient(await team.token('OWNER'));
    const refused = await api.POST('/rundowns/{id}/cues', { params: { path: { id: 'rd_missing' } }, body: { title: 'Nowhere' } });
    expect(refused.response.status).toBe(404);
    expect(refused.error).toMatchObject({ status: 404, code: 'rundowns.not_found' });
  });
});
