import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits, type Database } from '@rundown/shared';
import { domainOf, emptyRundown, openDatabase, teamCaller } from './support.js';

// The rundown service enforces its resources' text limits itself (the limits table, code points as JSON
// Schema's maxLength counts), not only the gateway's schemas: domain and repositories, real PostgreSQL.

let db: Database;
let domain: ReturnType<typeof domainOf>;

beforeAll(async () => {
  db = await openDatabase('limits');
  domain = domainOf(db);
});

afterAll(async () => {
  await db.destroy();
});

const emoji = '🎬';

describe('text limits in the owning service', () => {
  it('refuses a cue title over the limit, created or patched, and counts an emoji as one character', async () => {
    const ctx = teamCaller();
    const { result: rundown } = await domain.rundowns.create(ctx, { ...emptyRundown, title: 'Limits' });
    await expect(domain.cues.create(ctx, rundown.id, { title: 'x'.repeat(limits.cueTitleChars + 1) })).rejects.toMatchObject({
      code: 'cues.invalid_payload',
      details: { issues: [{ path: ['title'], code: 'too_big' }] },
    });
    const { result: cue } = await domain.cues.create(ctx, rundown.id, { title: emoji.repeat(limits.cueTitleChars) });
    expect(cue.title).toBe(emoji.repeat(limits.cueTitleChars));
    await expect(domain.cues.update(ctx, rundown.id, { id: cue.id, subtitle: emoji.repeat(limits.cueSubtitleChars + 1) })).rejects.toMatchObject({ code: 'cues.invalid_payload' });
    expect((await domain.cues.get(ctx, rundown.id, cue.id)).subtitle).toBe('');
  });

  it('refuses an over-long rundown title, column name, mention name and output message', async () => {
    const ctx = teamCaller();
    await expect(domain.rundowns.create(ctx, { ...emptyRundown, title: 'x'.repeat(limits.rundownTitleChars + 1) })).rejects.toMatchObject({ code: 'rundowns.invalid_payload' });
    await expect(domain.rundowns.create(ctx, { ...emptyRundown, title: 'ok', columns: [{ name: 'x'.repeat(limits.columnNameChars + 1) }] })).rejects.toMatchObject({
      code: 'rundowns.invalid_payload',
      details: { issues: [{ path: ['columns', 0, 'name'] }] },
    });
    const { result: rundown } = await domain.rundowns.create(ctx, { ...emptyRundown, title: emoji.repeat(limits.rundownTitleChars) });
    await expect(domain.mentions.create(ctx, rundown.id, { name: 'x'.repeat(limits.mentionNameChars + 1) })).rejects.toMatchObject({ code: 'mentions.invalid_payload' });
    await expect(domain.outputMessage.update(ctx, rundown.id, { text: 'x'.repeat(limits.outputMessageChars + 1) })).rejects.toMatchObject({ code: 'messages.invalid_payload' });
    await expect(domain.textVariables.create(ctx, rundown.id, { key: 'k', value: 'x'.repeat(limits.textVariableValueChars + 1) })).rejects.toMatchObject({ code: 'text_variables.invalid_payload' });
  });
});
