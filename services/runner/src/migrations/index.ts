import { outboxTraceMigration } from '@rundown/shared/outbox-migrations';
import { Shows1764100000000 } from './1764100000000-shows.js';
import { Timing1764200000000 } from './1764200000000-timing.js';
import { RequestKeys1765300000000 } from './1765300000000-request-keys.js';

export const migrations = [Shows1764100000000, Timing1764200000000, outboxTraceMigration('runner', 1764900000000), RequestKeys1765300000000];
