/** The plinth-apiserver executable: flags, start, and a clean stop on SIGINT/SIGTERM. */
import { FlagError, parseFlags, usage } from './flags.js';
import { startServer } from './server.js';
import { createLogger } from './log.js';
import { startMallocTrimmer } from './malloc.js';
import { installFastAsyncResourceBind } from '@plinth/storage';

export async function main(argv: string[]): Promise<void> {
  let opts;
  try {
    opts = parseFlags(argv);
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`Error: ${e.message}\n\n${usage()}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (opts.help) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  const log = createLogger(opts.verbosity);
  // Every etcd call opens an HTTP/2 stream, and Node 20 spends ~8 µs of each in AsyncResource#bind.
  const cheaperBind = installFastAsyncResourceBind();
  let server;
  try {
    server = await startServer(opts, log);
  } catch (e) {
    process.stderr.write(`Error: ${(e as Error).message}\n`);
    process.exit(1);
  }
  // One per process (tests run several servers in one): freed Buffers' memory back to the OS.
  const trimmer = startMallocTrimmer({
    onTrim: (before, after, ms) => log.v(4, 'returned free malloc memory to the OS', { freeBytesBefore: before, freeBytesAfter: after, ms: Math.round(ms * 10) / 10 }),
  });
  log.v(1, trimmer ? 'malloc trimming on' : 'malloc trimming off: the native addon was not built');
  log.v(1, cheaperBind ? "AsyncResource#bind replaced by a cheaper equivalent (Node's builds util.deprecate wrappers)" : "AsyncResource#bind is Node's own");
  process.stdout.write(`\nplinth is serving at ${server.url}\nTry:\n  kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n\n`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    server!
      .stop()
      .then(() => process.exit(0))
      .catch((e: unknown) => {
        process.stderr.write(`Error while stopping: ${String(e)}\n`);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
