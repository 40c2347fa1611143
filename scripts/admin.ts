/**
 * The admin surface (docs/api-decisions.md#admin) from a terminal: `npm run admin -- <command> ...`.
 * Talks to the admin listener (ADMIN_URL, default http://127.0.0.1:8081/admin) with ADMIN_SECRET
 * (from the environment, else the one `npm start` generated in the data folder).
 */
import { parseArgs } from 'node:util';
import { storedSecrets } from './launcher/secrets.js';
import { dataDirOf } from './launcher/util.js';

const usage = `Usage: npm run admin -- <command> [arguments] [options]

  teams create <name> [--plan free|paid] [--rate-limit N] [--max-rundowns N]
  teams get <team_id>
  teams update <team_id> [--plan free|paid] [--rate-limit N|none] [--max-rundowns N|none]
  columns create <rundown_id> --name NAME [--type text|select|image|attachment] [--private]
                                   a column the API cannot create (read-only type, or private)
  tokens mint <team_id> --role VIEW|SHOWCALL|EDIT|OWNER [--ttl SECONDS] [--rundown ID] [--name NAME] [--environment ENV]
  tokens list <team_id>
  tokens revoke <token_id>
  tokens rotate <team_id>          every token of the team issued before now is rejected
  v0-token <team_id>               issue the team's v0 token (the previous one stops working)
  cues lock|unlock <rundown_id> <cue_id>   set or clear the cue's prevent_edits (the v1 API cannot)
  webhooks list <team_id>                  the team's webhook endpoints
  webhooks deliveries <webhook_id> [--state pending|delivered|failed] [--cursor C]
                                   the endpoint's deliveries, newest first
  webhooks delivery <webhook_id> <delivery_id>   one delivery with the log of its attempts
  webhooks redeliver <webhook_id> <delivery_id>  attempt it again now (same webhook-id)

Environment: ADMIN_URL (default http://127.0.0.1:8081/admin), ADMIN_SECRET (default: from DATA_DIR/secrets.json).
Prints the answer's data as JSON; on an error prints the problem document and exits 1.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    plan: { type: 'string' },
    'rate-limit': { type: 'string' },
    'max-rundowns': { type: 'string' },
    role: { type: 'string' },
    ttl: { type: 'string' },
    rundown: { type: 'string' },
    name: { type: 'string' },
    environment: { type: 'string' },
    type: { type: 'string' },
    private: { type: 'boolean' },
    state: { type: 'string' },
    cursor: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${usage}\n`);
  process.exit(2);
}

async function adminSecret(): Promise<string> {
  if (process.env.ADMIN_SECRET) return process.env.ADMIN_SECRET;
  const dataDir = dataDirOf(process.env);
  const stored = (await storedSecrets(dataDir)).ADMIN_SECRET;
  return stored ?? fail(`No ADMIN_SECRET in the environment and none in ${dataDir}/secrets.json; start the system once with npm start, or set it.`);
}

/** `N` → number, `none` → null (drop an override), absent → undefined. */
function override(value: string | undefined, flag: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  if (!/^\d+$/.test(value)) fail(`--${flag} takes a whole number or "none"`);
  return Number(value);
}

function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

async function send(method: string, path: string, body?: unknown): Promise<void> {
  const base = (process.env.ADMIN_URL ?? 'http://127.0.0.1:8081/admin').replace(/\/+$/, '');
  const headers: Record<string, string> = { authorization: `Bearer ${await adminSecret()}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (error) {
    process.stderr.write(`Cannot reach the admin listener at ${base}: ${(error as Error).message}. Is the system running (npm start)?\n`);
    process.exit(1);
  }
  const text = await res.text();
  if (!res.ok) {
    process.stderr.write(`${res.status} ${text}\n`);
    process.exit(1);
  }
  const parsed = text ? (JSON.parse(text) as { data?: unknown }) : undefined;
  process.stdout.write(`${JSON.stringify(parsed?.data ?? { status: res.status }, null, 2)}\n`);
}

const [group, action, arg, second] = positionals;
if (values.help || !group) fail('');
const need = (value: string | undefined, what: string): string => value ?? fail(`missing ${what}`);

switch (`${group} ${group === 'v0-token' ? '' : (action ?? '')}`.trim()) {
  case 'teams create':
    await send('POST', '/teams', defined({
      name: need(arg, '<name>'),
      plan: values.plan,
      rate_limit_per_minute: override(values['rate-limit'], 'rate-limit'),
      max_rundowns: override(values['max-rundowns'], 'max-rundowns'),
    }));
    break;
  case 'teams get':
    await send('GET', `/teams/${need(arg, '<team_id>')}`);
    break;
  case 'teams update':
    await send('PATCH', `/teams/${need(arg, '<team_id>')}`, defined({
      plan: values.plan,
      rate_limit_per_minute: override(values['rate-limit'], 'rate-limit'),
      max_rundowns: override(values['max-rundowns'], 'max-rundowns'),
    }));
    break;
  case 'columns create':
    await send('POST', `/rundowns/${need(arg, '<rundown_id>')}/columns`, defined({
      name: need(values.name, '--name'),
      type: values.type,
      private: values.private,
    }));
    break;
  case 'tokens mint':
    await send('POST', `/teams/${need(arg, '<team_id>')}/tokens`, defined({
      role: need(values.role, '--role'),
      ttl_seconds: values.ttl === undefined ? undefined : Number(values.ttl),
      rundown_id: values.rundown,
      name: values.name,
      environment: values.environment,
    }));
    break;
  case 'tokens list':
    await send('GET', `/teams/${need(arg, '<team_id>')}/tokens`);
    break;
  case 'tokens revoke':
    await send('DELETE', `/tokens/${need(arg, '<token_id>')}`);
    break;
  case 'tokens rotate':
    await send('POST', `/teams/${need(arg, '<team_id>')}/tokens:rotate`);
    break;
  case 'cues lock':
  case 'cues unlock':
    await send('PATCH', `/rundowns/${need(arg, '<rundown_id>')}/cues/${need(second, '<cue_id>')}`, { prevent_edits: action === 'lock' });
    break;
  case 'v0-token':
    await send('POST', `/teams/${need(action, '<team_id>')}/v0-token`);
    break;
  case 'webhooks list':
    await send('GET', `/teams/${need(arg, '<team_id>')}/webhooks`);
    break;
  case 'webhooks deliveries': {
    const query = new URLSearchParams(defined({ state: values.state, cursor: values.cursor }) as Record<string, string>).toString();
    await send('GET', `/webhooks/${need(arg, '<webhook_id>')}/deliveries${query ? `?${query}` : ''}`);
    break;
  }
  case 'webhooks delivery':
    await send('GET', `/webhooks/${need(arg, '<webhook_id>')}/deliveries/${need(second, '<delivery_id>')}`);
    break;
  case 'webhooks redeliver':
    await send('POST', `/webhooks/${need(arg, '<webhook_id>')}/deliveries/${need(second, '<delivery_id>')}:redeliver`);
    break;
  default:
    fail(`unknown command: ${positionals.join(' ')}`);
}
