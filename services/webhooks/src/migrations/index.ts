import { Webhooks1766000000000 } from './1766000000000-webhooks.js';
import { DeliveryKey1766100000000 } from './1766100000000-delivery-key.js';

export const migrations = [Webhooks1766000000000, DeliveryKey1766100000000];
