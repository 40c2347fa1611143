// `npm start`: the whole system on one machine. Logic lives in ./launcher/.
import { parseArgs } from 'node:util';
import { launch } from './launcher/launch.js';

const usage = `Usage: npm start -- [options]

Starts PostgreSQL and Redis (existing or private), runs migrations, starts every service,
creates a demo team and prints the URLs and a demo token.

Services run compiled (services/*/dist, as the image runs them), built first when a source changed.

Options:
  --dev                run the services from their TypeScript sources (tsx), restarted when a file
                       changes (\`npm run dev\`); LAUNCH_MODE=source runs the sources without watching
  --no-demo            do not create/reuse the demo team (also: DEMO=0)
  --no-banner          skip the banner (the LAUNCHER_READY line is still printed)
  --ready-timeout <s>  seconds to wait for every service to be ready (default 60)
  -h, --help           show this help

Environment: LAUNCH_MODE (compiled | source), LAUNCH_NODE_ARGS, DATA_DIR, DATABASE_URL, DATABASE_NAME, REDIS_URL, HTTP_PORT, ADMIN_PORT,
GATEWAY_GRPC_PORT, <SERVICE>_GRPC_PORT and <SERVICE>_ADMIN_GRPC_PORT for every service (e.g.
AUTH_GRPC_PORT, RUNDOWN_ADMIN_GRPC_PORT), LOG_LEVEL, TOKEN_ENVIRONMENT, JWT_PRIVATE_KEYS,
V0_TOKEN_SECRET, CURSOR_SECRET, ADMIN_SECRET, INTERNAL_CONTEXT_KEYS, WEBHOOKS_SECRET_KEYS.`;

function parse() {
  try {
    return parseArgs({
      options: {
        dev: { type: 'boolean', default: false },
        'no-demo': { type: 'boolean', default: false },
        'no-banner': { type: 'boolean', default: false },
        'ready-timeout': { type: 'string', default: '60' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}\n`);
    process.exit(2);
  }
}

const values = parse();

if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

const readyTimeoutSeconds = Number(values['ready-timeout']);
if (!Number.isFinite(readyTimeoutSeconds) || readyTimeoutSeconds <= 0) {
  process.stderr.write(`--ready-timeout must be a positive number of seconds\n`);
  process.exit(2);
}

await launch({
  demo: !values['no-demo'] && process.env.DEMO !== '0',
  watch: values.dev,
  banner: !values['no-banner'],
  readyTimeoutMs: readyTimeoutSeconds * 1000,
});
