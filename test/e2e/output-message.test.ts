import { beforeAll, describe, expect, it } from 'vitest';
import { createTeam, v1, type TestTeam } from '../support/client.js';
import { expectProblem } from '../support/problems.js';

let team: TestTeam;
let rundown: string;
let showcaller: string;

beforeAll(async () => {
  team = await createTeam();
  const owner = await team.token('OWNER');
  showcaller = await team.token('SHOWCALL');
  const res = await v1('POST', '/rundowns', { token: owner, body: { title: 'Output message' } });
  rundown = res.body.data.id;
});

const path = () => `/rundowns/${rundown}/output-message`;

describe('output message', () => {
  it('reads back the defaults before it was ever written', async () => {
    const res = await v1('GET', path(), { token: showcaller });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ text: '', visible: false, color: '#ffffff', bold: false, underline: false, updated_at: null });
    expect(res.body.meta.side_effects).toEqual([]);
  });

  it('changes any field with PATCH and reports output_message.changed', async () => {
    const res = await v1('PATCH', path(), { token: showcaller, body: { text: 'Wrap up', visible: true, bold: true } });
    expect(res.status, res.text).toBe(200);
    const message = { text: 'Wrap up', visible: true, color: '#ffffff', bold: true, underline: false, updated_at: expect.any(String) };
    expect(res.body.data).toEqual(message);
    expect(res.body.meta.side_effects).toEqual([{ type: 'output_message.changed', rundown_id: rundown, output_message: res.body.data }]);
    const styled = await v1('PATCH', path(), { token: showcaller, body: { color: '#f80', underline: true, visible: false } });
    expect(styled.body.data).toEqual({ ...message, color: '#f80', underline: true, visible: false });
    expect((await v1('GET', path(), { token: showcaller })).body.data).toEqual(styled.body.data);
  });

  it('reports no side effect when a PATCH changes nothing', async () => {
    const current = (await v1('GET', path(), { token: showcaller })).body.data;
    const res = await v1('PATCH', path(), { token: showcaller, body: { text: current.text, bold: current.bold } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(current);
    expect(res.body.meta.side_effects).toEqual([]);
  });

  it('takes the token as ?token= (control surface); reads need VIEW, writes SHOWCALL', async () => {
    const viewer = await team.token('VIEW');
    expect((await v1('GET', path(), { query: { token: viewer } })).status).toBe(200);
    expectProblem(await v1('PATCH', path(), { query: { token: viewer }, body: { visible: true } }), 403, 'forbidden');
    const shown = await v1('PATCH', path(), { query: { token: showcaller }, body: { visible: true } });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.body.data.visible).toBe(true);
  });

  it('answers messages.empty_patch for a PATCH without fields', async () => {
    expectProblem(await v1('PATCH', path(), { token: showcaller, body: {} }), 422, 'messages.empty_patch');
  });

  it('refuses invalid fields with messages.invalid_payload and issues', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ text: 'x'.repeat(1_001) }, ['text']],
      [{ visible: 'yes' }, ['visible']],
      [{ color: 'white' }, ['color']],
      [{ bold: 1 }, ['bold']],
      [{ underline: null }, ['underline']],
      [{ text: 'x', blink: true }, []],
    ];
    for (const [body, issuePath] of cases) {
      const res = await v1('PATCH', path(), { token: showcaller, body });
      expectProblem(res, 400, 'messages.invalid_payload');
      expect(res.body.details.issues.map((i: { path: unknown }) => i.path), JSON.stringify(body).slice(0, 60)).toContainEqual(issuePath);
    }
    const longest = await v1('PATCH', path(), { token: showcaller, body: { text: 'x'.repeat(1_000) } });
    expect(longest.status).toBe(200);
  });

  it('hides other teams’ rundowns', async () => {
    const stranger = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', path(), { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(await v1('PATCH', path(), { token: stranger, body: { visible: true } }), 404, 'rundowns.not_found');
  });
});
