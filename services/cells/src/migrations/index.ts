import { outboxMigration, outboxTraceMigration } from '@rundown/shared/outbox-migrations';
import { Cells1764100000000 } from './1764100000000-cells.js';
import { CellsFillfactor1765000000000 } from './1765000000000-cells-fillfactor.js';

export const migrations = [
  Cells1764100000000,
  outboxMigration('cells', 1764200000000),
  outboxTraceMigration('cells', 1764900000000),
  CellsFillfactor1765000000000,
];
