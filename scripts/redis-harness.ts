// A local Redis Cluster or Sentinel group for development (docs/testing.md#redis-cluster-and-sentinel):
//   npm run redis:harness -- cluster  [--port 7100] [--replicas 0]
//   npm run redis:harness -- sentinel [--port 7110]
// It prints the settings to start the services with, and stops everything on Ctrl-C.
import { parseArgs } from 'node:util';
import { startCluster, startSentinelGroup } from '../test/support/redis-harness.js';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { port: { type: 'string' }, replicas: { type: 'string' } } });
const shape = positionals[0];
if (shape !== 'cluster' && shape !== 'sentinel') {
  console.error('usage: npm run redis:harness -- cluster|sentinel [--port N] [--replicas N (cluster)]');
  process.exit(2);
}
const harness =
  shape === 'cluster'
    ? await startCluster({ basePort: Number(values.port ?? 7100), replicas: Number(values.replicas ?? 0) })
    : await startSentinelGroup({ basePort: Number(values.port ?? 7110) });
if ('nodes' in harness) console.log(`Redis Cluster up (ports ${harness.ports.join(', ')}). Start the services with:\n  REDIS_MODE=cluster REDIS_CLUSTER_NODES=${harness.nodes}`);
else
  console.log(
    `Sentinel group up (primary ${harness.dataPorts[0]}, replica ${harness.dataPorts[1]}, sentinels ${harness.sentinels}). Start the services with:\n  REDIS_MODE=sentinel REDIS_SENTINELS=${harness.sentinels} REDIS_SENTINEL_MASTER=${harness.master}`,
  );
console.log('Ctrl-C stops it.');
const stop = () => void harness.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
