import { beforeAll, describe, expect, it } from 'vitest';
import { Client, credentials, Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import {
  addressVariable,
  adminAddressVariable,
  CONTEXT_METADATA_KEY,
  ContextKeys,
  SERVICES,
  type CallerContext,
  type Principal,
  type ServiceName,
} from '@rundown/shared';
import { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { AuthAdminServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth_admin';
import { CellServiceService } from '@rundown/shared/proto/rundown/cells/v1/cells';
import { CreateRundownRequest, RundownServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RunnerAdminServiceService, RunnerServiceService } from '@rundown/shared/proto/rundown/runner/v1/runner';
import { RundownAdminServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown_admin';
import { WebhookAdminServiceService, WebhookServiceService } from '@rundown/shared/proto/rundown/webhooks/v1/webhooks';
import { createRundown, createTeam, system, v1 } from '../support/client.js';

interface MethodDef {
  path: string;
  requestSerialize: (value: never) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

/** What the running system's services are asked, per service of the services table. */
interface Probe {
  /** A team-scoped read: `resource` belongs to the team the test gives it. */
  method: MethodDef;
  request(resource: Resources): unknown;
  /** Every admin service the service serves on its admin port. */
  admin: Record<string, MethodDef>[];
}

interface Resources {
  teamId: string;
  rundownId: string;
  webhookId: string;
}

/**
 * One row per service of the table (a new service fails the typecheck until it has one): the
 * refusals below then run against it too.
 */
// realtime serves no gRPC methods (health only; its callers are Socket.IO clients): nothing to probe.
type Probed = Exclude<ServiceName, 'realtime'>;
const probes: Record<Probed, Probe> = {
  auth: {
    method: AuthServiceService.getTeam as MethodDef,
    request: (r) => ({ team_id: r.teamId }),
    admin: [AuthAdminServiceService as unknown as Record<string, MethodDef>],
  },
  rundown: {
    method: RundownServiceService.getRundown as MethodDef,
    request: (r) => ({ rundown_id: r.rundownId }),
    admin: [RundownAdminServiceService as unknown as Record<string, MethodDef>],
  },
  cells: {
    method: CellServiceService.listCells as MethodDef,
    request: (r) => ({ rundown_id: r.rundownId, limit: 0, cursor: '' }),
    admin: [],
  },
  runner: {
    method: RunnerServiceService.getStatus as MethodDef,
    request: (r) => ({ rundown_id: r.rundownId }),
    admin: [RunnerAdminServiceService as unknown as Record<string, MethodDef>],
  },
  webhooks: {
    method: WebhookServiceService.getEndpoint as MethodDef,
    request: (r) => ({ webhook_id: r.webhookId }),
    admin: [WebhookAdminServiceService as unknown as Record<string, MethodDef>],
  },
};

/** A raw call, so the test sees the gRPC status itself (the shared client maps it to the catalogue). */
function rawCall(address: string, method: MethodDef, request: unknown, metadata: Metadata): Promise<{ code: number; value?: unknown }> {
  const client = new Client(address, credentials.createInsecure());
  // `null`: an empty message (every field at its default), whatever the method's request type.
  const serialize = (value: unknown) => (value === null ? Buffer.alloc(0) : (method.requestSerialize as (v: unknown) => Buffer)(value));
  return new Promise((resolve) => {
    client.makeUnaryRequest(method.path, serialize, method.responseDeserialize, request, metadata, { deadline: Date.now() + 5_000 }, (err, value) => {
      client.close();
      resolve(err ? { code: err.code } : { code: GrpcStatus.OK, value });
    });
  });
}

let keys: ContextKeys;
let owner: Resources;
let other: Resources;

const signed = (principal: Principal, ctx: CallerContext, path: string, by: ContextKeys = keys) => by.signer(principal)(ctx, path);
const edgeOf = (r: Resources): CallerContext => ({ requestId: 'req_trust', teamId: r.teamId, role: 'OWNER', tokenId: 'tok_trust' });
const address = (name: string) => system().launcher.addresses[addressVariable(name)]!;
const adminAddress = (name: string) => system().launcher.addresses[adminAddressVariable(name)]!;

beforeAll(async () => {
  keys = ContextKeys.parse(system().launcher.internal_context_keys);
  const [a, b] = await Promise.all([createTeam(), createTeam()]);
  const [ta, tb] = await Promise.all([a.token(), b.token()]);
  const [ra, rb] = await Promise.all([createRundown(ta, { title: 'trust A' }), createRundown(tb, { title: 'trust B' })]);
  // A webhook endpoint of each team (a local default lets one point at loopback).
  const webhook = (token: string) => v1('POST', '/webhooks', { token, body: { url: 'http://127.0.0.1:9/trust', events: ['cue'] } });
  const [wa, wb] = await Promise.all([webhook(ta), webhook(tb)]);
  owner = { teamId: a.id, rundownId: ra.id as string, webhookId: wa.body.data.id as string };
  other = { teamId: b.id, rundownId: rb.id as string, webhookId: wb.body.data.id as string };
});

describe.each(SERVICES.filter((s): s is Extract<(typeof SERVICES)[number], { name: Probed }> => s.name in probes).map((s) => [s.name, s] as const))('internal trust: the %s service', (name) => {
  const probe = probes[name];
  const expectedOk = name === 'auth' ? ({ kind: 'service', name: 'rundown' } as const) : ({ kind: 'edge' } as const);

  it('answers a genuine context (the control: the refusals below are about the context alone)', async () => {
    const res = await rawCall(address(name), probe.method, probe.request(owner), signed(expectedOk, edgeOf(owner), probe.method.path));
    expect(res.code).toBe(GrpcStatus.OK);
  });

  it('refuses a missing context with UNAUTHENTICATED', async () => {
    const res = await rawCall(address(name), probe.method, probe.request(owner), new Metadata());
    expect(res.code).toBe(GrpcStatus.UNAUTHENTICATED);
  });

  it('refuses a forged, expired or replayed context with UNAUTHENTICATED', async () => {
    const kid = keys.keys[0]!.id;
    const forger = new ContextKeys([{ id: kid, secret: Buffer.from('f'.repeat(48)) }]);
    const forged = await rawCall(address(name), probe.method, probe.request(owner), signed(expectedOk, edgeOf(owner), probe.method.path, forger));
    expect(forged.code).toBe(GrpcStatus.UNAUTHENTICATED);

    const past = new ContextKeys(keys.keys, () => Date.now() - 31_000);
    const expired = await rawCall(address(name), probe.method, probe.request(owner), signed(expectedOk, edgeOf(owner), probe.method.path, past));
    expect(expired.code).toBe(GrpcStatus.UNAUTHENTICATED);

    const replayed = await rawCall(address(name), probe.method, probe.request(owner), signed(expectedOk, edgeOf(owner), '/rundown.auth.v1.AuthService/GetVerificationKeys'));
    expect(replayed.code).toBe(GrpcStatus.UNAUTHENTICATED);

    const garbage = new Metadata();
    garbage.set(CONTEXT_METADATA_KEY, 'not-a-context');
    expect((await rawCall(address(name), probe.method, probe.request(owner), garbage)).code).toBe(GrpcStatus.UNAUTHENTICATED);
  });

  it('refuses a genuine context of another team', async () => {
    const res = await rawCall(address(name), probe.method, probe.request(owner), signed({ kind: 'edge' }, edgeOf(other), probe.method.path));
    expect([GrpcStatus.NOT_FOUND, GrpcStatus.PERMISSION_DENIED]).toContain(res.code);
  });

  // A service without admin RPCs (no admin port in the services table) has nothing to guard here.
  it.runIf(probe.admin.length > 0)('lets no caller but the gateway’s admin listener reach an admin method', async () => {
    const callers: Principal[] = [{ kind: 'edge' }, { kind: 'service', name: 'gateway' }, ...SERVICES.map((s) => ({ kind: 'service' as const, name: s.name }))];
    let methods = 0;
    for (const definition of probe.admin) {
      for (const method of Object.values(definition)) {
        methods++;
        for (const caller of callers) {
          const res = await rawCall(adminAddress(name), method, null, signed(caller, edgeOf(owner), method.path));
          expect(res.code, `${JSON.stringify(caller)} -> ${method.path}`).toBe(GrpcStatus.PERMISSION_DENIED);
        }
        expect((await rawCall(adminAddress(name), method, null, new Metadata())).code, `no context -> ${method.path}`).toBe(GrpcStatus.UNAUTHENTICATED);
        // Nor is an admin method served on the service's ordinary port, whoever asks.
        const misplaced = await rawCall(address(name), method, null, signed({ kind: 'admin' }, { requestId: 'req_trust' }, method.path));
        expect(misplaced.code, `${method.path} on the ordinary port`).toBe(GrpcStatus.UNIMPLEMENTED);
      }
    }
    expect(methods).toBeGreaterThan(0);
  });

  it('refuses the admin principal on the ordinary port', async () => {
    const res = await rawCall(address(name), probe.method, probe.request(owner), signed({ kind: 'admin' }, edgeOf(owner), probe.method.path));
    expect(res.code).toBe(GrpcStatus.PERMISSION_DENIED);
  });
});

describe('service identities', () => {
  it('allow a service only the methods listed for it', async () => {
    // The rundown service may read a team's plan from auth, but not the token verification keys.
    const getTeam = await rawCall(address('auth'), AuthServiceService.getTeam as MethodDef, { team_id: owner.teamId }, signed({ kind: 'service', name: 'rundown' }, { requestId: 'r' }, AuthServiceService.getTeam.path));
    expect(getTeam.code).toBe(GrpcStatus.OK);
    const keysCall = await rawCall(address('auth'), AuthServiceService.getVerificationKeys as MethodDef, {}, signed({ kind: 'service', name: 'rundown' }, { requestId: 'r' }, AuthServiceService.getVerificationKeys.path));
    expect(keysCall.code).toBe(GrpcStatus.PERMISSION_DENIED);
    // And an API token's context reaches nothing in auth: plan facts are not the caller's to read or set.
    const edge = await rawCall(address('auth'), AuthServiceService.getTeam as MethodDef, { team_id: owner.teamId }, signed({ kind: 'edge' }, edgeOf(owner), AuthServiceService.getTeam.path));
    expect(edge.code).toBe(GrpcStatus.PERMISSION_DENIED);
  });
});

describe('plan facts', () => {
  it('come from auth: a quota written into the call’s metadata changes nothing', async () => {
    const team = await createTeam({ plan: 'free', max_rundowns: 1 });
    await createRundown(await team.token(), { title: 'the one allowed' });
    const create = RundownServiceService.createRundown;
    const metadata = signed({ kind: 'edge' }, { requestId: 'req_quota', teamId: team.id, role: 'OWNER', tokenId: 'tok_quota' }, create.path);
    // What the gateway used to send, and any header a caller might try.
    metadata.set('x-team-max-rundowns', '1000');
    metadata.set('x-max-rundowns', '1000');
    const res = await rawCall(address('rundown'), create as unknown as MethodDef, { ...CreateRundownRequest.decode(new Uint8Array()), title: 'one too many' }, metadata);
    expect(res.code).toBe(GrpcStatus.FAILED_PRECONDITION); // plan.limit_exceeded (422)
  });
});
