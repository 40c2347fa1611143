import type { RedisClient, Replication, Database } from '@rundown/shared';
import type { SigningKeys } from './domain/signing.js';
import { TeamsService } from './domain/teams.js';
import { RevocationStore } from './repositories/revocations.js';
import { TeamsRepository } from './repositories/teams.js';
import { TokensRepository } from './repositories/tokens.js';

/**
 * The auth context's domain over its repositories (PostgreSQL, and the revocation view in Redis):
 * what the gRPC handlers serve and what the medium tier exercises (no transport).
 */
export function authDomain(db: Database, redis: RedisClient, keys: SigningKeys, tokenEnvironment: string, replication?: Replication) {
  return { teams: new TeamsService(new TeamsRepository(db), new TokensRepository(db), new RevocationStore(redis, replication), keys, tokenEnvironment) };
}
