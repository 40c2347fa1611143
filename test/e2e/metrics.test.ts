import { describe, expect, it } from 'vitest';
import { createRundown, createTeam, system, v1 } from '../support/client.js';

// Every process of the system serves Prometheus' text format on its own port (METRICS_PORT; the
// launcher gives each one, the chart sets it on every pod): RED per HTTP route and per RPC, and
// the domain's gauges.

async function scrape(service: string): Promise<string> {
  const port = system().launcher.metrics_ports[service];
  expect(port, `no metrics port for ${service}`).toBeDefined();
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of the first sample whose name and labels match (labels as `key="value"` fragments). */
function sample(text: string, name: string, ...labels: string[]): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels.every((l) => line.includes(l))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics', () => {
  it('count HTTP requests per route template and status, with their duration', async () => {
    const team = await createTeam();
    const token = await team.token('OWNER');
    const rundown = await createRundown(token, { title: 'Measured' });
    // The GET series itself: another method's on this route (a DELETE of an earlier test file) may come first.
    const before =
      sample(await scrape('gateway'), 'http_server_request_duration_count', 'http_route="/v1/rundowns/:id"', 'http_response_status_code="200"', 'http_request_method="GET"') ?? 0;
    for (let i = 0; i < 3; i++) expect((await v1('GET', `/rundowns/${rundown.id}`, { token })).status).toBe(200);
    expect((await v1('GET', '/rundowns/rd_doesnotexist000000000000', { token })).status).toBe(404);
    const text = await scrape("gateway");
    const after = sample(text, 'http_server_request_duration_count', 'http_route="/v1/rundowns/:id"', 'http_response_status_code="200"', 'http_request_method="GET"');
    expect(after! - before).toBeGreaterThanOrEqual(3);
    // Errors are the same series by status; the route is the template, never the path (bounded labels).
    expect(sample(text, 'http_server_request_duration_count', 'http_route="/v1/rundowns/:id"', 'http_response_status_code="404"')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(rundown.id);
    expect(sample(text, 'http_server_request_duration_bucket', 'http_route="/v1/rundowns/:id"', 'http_request_method="GET"', 'http_response_status_code="200"', 'le="+Inf"')).toBeGreaterThanOrEqual(3);
    // The domain's own gauge on the gateway.
    expect(sample(text, 'rundown_sse_connections')).toBeGreaterThanOrEqual(0);
  });

  it('count RPCs per method and status code on the serving side, and expose the domain gauges', async () => {
    const team = await createTeam();
    const token = await team.token('OWNER');
    const rundown = await createRundown(token, { title: 'Measured RPCs', cues: [{ title: 'one', duration_ms: 60_000 }] });
    expect((await v1('POST', `/rundowns/${rundown.id}/action:start`, { token })).status).toBe(200);
    const rundownText = await scrape('rundown');
    expect(sample(rundownText, 'rpc_server_call_duration_count', 'rpc_method="/rundown.rundown.v1.RundownService/CreateRundown"', 'rpc_grpc_status_code="0"')).toBeGreaterThanOrEqual(1);
    expect(sample(rundownText, 'rundown_outbox_lag', 'outbox_schema="rundown"')).toBeGreaterThanOrEqual(0);
    const runnerText = await scrape('runner');
    expect(sample(runnerText, 'rpc_server_call_duration_count', 'rpc_method="/rundown.runner.v1.RunnerService/Act"')).toBeGreaterThanOrEqual(1);
    expect(sample(runnerText, 'rundown_jobs_queued', 'state="delayed"')).toBeGreaterThanOrEqual(1);
    expect(sample(runnerText, 'rundown_jobs_late')).toBeGreaterThanOrEqual(0);
    expect(sample(await scrape('realtime'), 'rundown_socketio_connections')).toBeGreaterThanOrEqual(0);
    for (const service of ['auth', 'cells']) expect(await scrape(service)).toContain('target_info');
  });
});
