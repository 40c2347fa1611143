import type { Principal } from '../edge/authenticator.js';
import type { Clients } from '../edge/clients.js';
import type { RunnerStatusReader } from './runner-status.js';
import { statusJson, storedStatusJson, type StatusJson } from '../wire/records.js';

/** The status now: the read model when it has the rundown, else the runner (which fills the read model). */
export async function currentStatus(
  reader: RunnerStatusReader,
  clients: Pick<Clients, 'runner'>,
  principal: Principal,
  rundownId: string,
  caller: Parameters<Clients['runner']['getStatus']>[1],
  /** The runner's answer is clocked at this instant (default: its own `server_time`). */
  serverTime?: number,
): Promise<StatusJson> {
  const stored = await reader.get(principal, rundownId);
  if (stored) return storedStatusJson(stored, Date.now());
  return statusJson(await clients.runner.getStatus({ rundown_id: rundownId }, caller), serverTime);
}
