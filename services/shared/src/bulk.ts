import { AppError } from './errors/app-error.js';
import { limits } from './limits.js';

/** Every `:bulk` operation carries at most `limits.bulkItems` items. */
export function checkBulkSize(received: number, resource: string): void {
  if (received > limits.bulkItems) {
    throw new AppError('bulk.too_many_items', {
      detail: `A bulk request carries at most ${limits.bulkItems} items; this one has ${received}.`,
      details: { limit: limits.bulkItems, received, unit: 'items', resource },
    });
  }
}
