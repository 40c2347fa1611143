import { Webhooks1766000000000 } from './1766000000000-webhooks.js';
import { DeliveryKey1766100000000 } from './1766100000000-delivery-key.js';
import { TimingDigest1766200000000 } from './1766200000000-timing-digest.js';

export const migrations = [Webhooks1766000000000, DeliveryKey1766100000000, TimingDigest1766200000000];
