import { outboxMigration, outboxTraceMigration } from '@rundown/shared/outbox-migrations';
import { Rundowns1763800000000 } from './1763800000000-rundowns.js';
import { Content1763960000000 } from './1763960000000-content.js';
import { MentionColor1764000000000 } from './1764000000000-mention-color.js';
import { OrderVersion1765100000000 } from './1765100000000-order-version.js';
import { RecordVersion1766000000000 } from './1766000000000-record-version.js';

export const migrations = [
  Rundowns1763800000000,
  Content1763960000000,
  MentionColor1764000000000,
  // The transactional outbox of the rundown's domain events (services/shared/src/outbox).
  outboxMigration('rundown', 1764100000000),
  // The originating trace of each event (the relay's span links to it).
  outboxTraceMigration('rundown', 1764900000000),
  // The version of each rundown's playable order (the runner's conditional read).
  OrderVersion1765100000000,
  // The version of each rundown record and the rundowns a transaction wrote (the gateway's read model).
  RecordVersion1766000000000,
];
