// The sanitize worker when the service runs from source (`npm run dev`, the tests): a Node 20
// worker thread inherits no loader hooks, so tsx is registered in the thread before the
// TypeScript worker is loaded. The compiled service loads sanitize-worker.js directly.
import { register } from 'tsx/esm/api';

register();
export default (await import('./sanitize-worker.ts')).default;
