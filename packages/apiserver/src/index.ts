export { startServer, type RunningServer } from './server.js';
export { parseFlags, usage, FlagError, type ServerOptions } from './flags.js';
export { main } from './main.js';
export { createLogger, type Logger } from './log.js';
