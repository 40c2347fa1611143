// Telemetry first, then everything it instruments (loaded dynamically so the hooks see it).
import '@rundown/shared/telemetry';

const { main } = await import('./app.js');
await main(process.argv.slice(2));
