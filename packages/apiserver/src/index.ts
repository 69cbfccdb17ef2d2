export { startServer, type RunningServer, type ServerExtensions } from './server.js';
export { parseFlags, usage, FlagError, type ServerOptions } from './flags.js';
export { main } from './main.js';
export { createLogger, type Logger } from './log.js';
export { encodeProtobuf, decodeProtobuf, encodeWatchEventFrame, decodeWatchEventFrames, PROTOBUF_PREFIX } from './protobuf/codec.js';
export { ResourceStore } from './registry/store.js';
export * from './services/index.js';
