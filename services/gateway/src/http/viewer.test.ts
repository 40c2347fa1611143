import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as Page from '../../viewer/src/api.js';
import { type sseFrames } from '../events/frame-schemas.js';
import { type cueRecord } from '../wire/schemas/cues.js';
import { type outputMessageRecord } from '../wire/schemas/output-message.js';
import { type rundownRecord } from '../wire/schemas/rundowns.js';
import { type statusRecord } from '../wire/schemas/runner.js';
import { type timingRecord } from '../wire/schemas/timing.js';
import { loadViewer, VIEWER_CSP, viewerPath } from './viewer.js';

const urls = {
  base: 'https://shows.example/rundown/v1',
  docs: 'https://shows.example/rundown/docs',
  spec: 'https://shows.example/rundown/v1/openapi.json',
  errors: 'https://shows.example/rundown/docs/api-v1/errors',
  v0Spec: 'https://shows.example/rundown/docs/api-v0/openapi.json',
  asyncApi: 'https://shows.example/rundown/docs/events/asyncapi.json',
  events: 'https://shows.example/rundown/docs/events',
};

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the stage screen’s files', () => {
  it('reads the API as the API’s own schemas describe it (checked by the typecheck)', () => {
    expectTypeOf<z.output<typeof statusRecord>>().toExtend<Page.Status>();
    expectTypeOf<z.output<typeof timingRecord>>().toExtend<Page.Timing>();
    expectTypeOf<z.output<typeof cueRecord>>().toExtend<Page.Cue>();
    expectTypeOf<z.output<typeof rundownRecord>>().toExtend<Page.Rundown>();
    expectTypeOf<z.output<typeof outputMessageRecord>>().toExtend<Page.OutputMessage>();
    type Frame<N extends keyof typeof sseFrames> = z.output<(typeof sseFrames)[N]['payload']>;
    expectTypeOf<Frame<'ready'>>().toExtend<Page.Frames['ready']>();
    expectTypeOf<Frame<'status'>>().toExtend<Page.Frames['status']>();
    expectTypeOf<Frame<'rundown'>>().toExtend<Page.Frames['rundown']>();
    expectTypeOf<Frame<'cue'>>().toExtend<Page.Frames['cue']>();
    expectTypeOf<Frame<'output_message'>>().toExtend<Page.Frames['output_message']>();
    expectTypeOf<Frame<'heartbeat'>>().toExtend<Page.Frames['heartbeat']>();
    expectTypeOf<Frame<'disconnect'>>().toExtend<Page.Frames['disconnect']>();
  });

  it('writes the deployment’s paths into the page (under PUBLIC_URL’s path) and maps its assets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'viewer-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<meta name="rundown-api" content="{{api}}"><meta name="rundown-heartbeat-ms" content="{{heartbeat_ms}}"><script src="{{assets}}/viewer-ABC.js"></script>',
    );
    writeFileSync(join(dir, 'assets', 'viewer-ABC.js'), 'export {}');
    writeFileSync(join(dir, 'assets', 'viewer-ABC.js.map'), '{}');
    writeFileSync(join(dir, 'assets', 'notes.txt'), 'not served');
    const files = loadViewer(dir, urls, 1_500)!;
    expect(viewerPath(urls)).toBe('/rundown/view');
    expect(files.html).toBe(
      '<meta name="rundown-api" content="/rundown/v1"><meta name="rundown-heartbeat-ms" content="1500"><script src="/rundown/view/assets/viewer-ABC.js"></script>',
    );
    expect([...files.assets.keys()].sort()).toEqual(['viewer-ABC.js', 'viewer-ABC.js.map']);
    expect(files.assets.get('viewer-ABC.js')!.type).toBe('text/javascript; charset=utf-8');
  });

  it('is missing, not broken, before a build', () => {
    expect(loadViewer(join(tmpdir(), 'no-such-viewer-build'), urls, 15_000)).toBeUndefined();
  });

  it('allows nothing but this origin, no inline code, no framing', () => {
    const directives = Object.fromEntries(VIEWER_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toMatchObject({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
    });
    expect(VIEWER_CSP).not.toMatch(/unsafe|\*|https?:/);
  });
});
