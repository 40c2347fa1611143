import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { AppError, bindService, ContextKeys, createClient, createLogger, startGrpcServer, type RunningGrpcServer } from '@rundown/shared';
import { edge, testKeys } from '../support/trust.js';
import { RundownServiceService, RundownStatus } from '@rundown/shared/proto/rundown/rundown/v1/rundown';

let server: RunningGrpcServer;
const seen: unknown[] = [];

const notImplemented = async (): Promise<never> => {
  throw new Error('not used');
};

beforeAll(async () => {
  server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    keys: testKeys,
    logger: createLogger('it', 'silent'),
    services: [
      bindService(RundownServiceService, {
        getRundown: async (req, ctx) => {
          seen.push(ctx);
          if (req.rundown_id === 'missing') throw new AppError('rundowns.not_found');
          if (req.rundown_id === 'boom') throw new Error('secret internals');
          if (req.rundown_id.startsWith('echo:')) {
            const echoed = req.rundown_id.slice(5);
            throw new AppError('columns.not_found', { detail: `Column ${echoed} not found.`, details: { column_id: echoed, indexes: Array.from({ length: 30_000 }, (_, i) => i) } });
          }
          return { id: req.rundown_id, title: 't', status: RundownStatus.RUNDOWN_STATUS_DRAFT, settings: undefined, cue_order: [], column_order: [], created_at: undefined, updated_at: undefined };
        },
        createRundown: notImplemented,
        getRundownWithCues: notImplemented,
        updateRundown: notImplemented,
        listRundowns: notImplemented,
        deleteRundown: async () => {
          throw new AppError('cues.group_not_empty', { details: { cue_id: 'g', children_ids: ['a'] } });
        },
      }),
    ],
  });
});

afterAll(async () => {
  await server.shutdown();
});

describe('the gRPC spine over a real connection', () => {
  it('carries the signed caller context and returns typed responses', async () => {
    const client = createClient(RundownServiceService, `127.0.0.1:${server.port}`, edge);
    const rundown = await client.getRundown({ rundown_id: 'rd_1' }, { requestId: 'req_x', teamId: 'team_1', role: 'EDIT', tokenRundownId: 'rd_1', tokenId: 'tok_1' });
    expect(rundown.id).toBe('rd_1');
    expect(seen.at(-1)).toEqual({ requestId: 'req_x', teamId: 'team_1', role: 'EDIT', tokenRundownId: 'rd_1', tokenId: 'tok_1', principal: { kind: 'edge' } });
    client.close();
  });

  it('brings a catalogue error back out unchanged, and hides unexpected ones', async () => {
    const client = createClient(RundownServiceService, `127.0.0.1:${server.port}`, edge);
    await expect(client.getRundown({ rundown_id: 'missing' }, { requestId: 'r' })).rejects.toMatchObject({ code: 'rundowns.not_found', status: 404 });
    await expect(client.deleteRundown({ rundown_id: 'g' }, { requestId: 'r' })).rejects.toMatchObject({
      code: 'cues.group_not_empty',
      details: { cue_id: 'g', children_ids: ['a'] },
    });
    const hidden = await client.getRundown({ rundown_id: 'boom' }, { requestId: 'r' }).catch((e: AppError) => e);
    expect(hidden).toMatchObject({ code: 'internal.unhandled' });
    expect((hidden as AppError).detail).not.toContain('secret');
    client.close();
  });

  it('bounds what an error carries: an oversized one answers at once, and never takes the calls beside it down', async () => {
    const client = createClient(RundownServiceService, `127.0.0.1:${server.port}`, edge);
    try {
      await client.getRundown({ rundown_id: 'warm' }, { requestId: 'r' });
      const huge = '\u{1F600}'.repeat(25_000); // 100 KB of UTF-8, 300 KB percent-encoded
      const started = Date.now();
      const [oversized, beside] = await Promise.all([
        client.getRundown({ rundown_id: `echo:${huge}` }, { requestId: 'r' }).catch((e: AppError) => e),
        new Promise((r) => setTimeout(r, 20)).then(() => client.getRundown({ rundown_id: 'beside' }, { requestId: 'r' })),
      ]);
      expect(beside).toMatchObject({ id: 'beside' });
      expect(oversized).toMatchObject({ code: 'columns.not_found', status: 404 });
      const error = oversized as AppError;
      expect([...error.detail].length).toBeLessThan(1_100);
      expect(error.detail).toContain('…');
      expect(JSON.stringify(error.details).length).toBeLessThan(16_000);
      expect(String(error.details?.column_id)).toMatch(/…\[cut: \d+ more characters\]$/);
      // Neither call waited for a deadline (5 s): the connection stayed up.
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      client.close();
    }
  });

  it('reports an unreachable service as service_unavailable within the deadline', async () => {
    const client = createClient(RundownServiceService, '127.0.0.1:1', { ...edge, deadlineMs: 300 });
    const started = Date.now();
    await expect(client.getRundown({ rundown_id: 'x' }, { requestId: 'r' })).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(Date.now() - started).toBeLessThan(2_000);
    client.close();
  });
});

describe('the gRPC spine refuses what it cannot trust', () => {
  it('answers UNAUTHENTICATED without running the handler, and logs why', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    let ran = 0;
    const guarded = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      keys: testKeys,
      logger,
      services: [
        bindService(RundownServiceService, {
          getRundown: async (req) => {
            ran++;
            return { id: req.rundown_id, title: 't', status: RundownStatus.RUNDOWN_STATUS_DRAFT, settings: undefined, cue_order: [], column_order: [], created_at: undefined, updated_at: undefined };
          },
          createRundown: notImplemented,
          getRundownWithCues: notImplemented,
          updateRundown: notImplemented,
          listRundowns: notImplemented,
          deleteRundown: notImplemented,
        }),
      ],
    });
    const forger = ContextKeys.parse(`it-1:${'x'.repeat(40)}`);
    const client = createClient(RundownServiceService, `127.0.0.1:${guarded.port}`, { signer: forger.signer({ kind: 'edge' }) });
    // The shared client maps a bare refusal to internal.unhandled: never the client's fault at the edge.
    await expect(client.getRundown({ rundown_id: 'rd_1' }, { requestId: 'req_forged', teamId: 'team_1' })).rejects.toMatchObject({ code: 'internal.unhandled' });
    expect(ran).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, reason: 'bad_signature', method: '/rundown.rundown.v1.RundownService/GetRundown', msg: 'refused gRPC call: caller context not valid' }));
    client.close();
    await guarded.shutdown();
  });
});
