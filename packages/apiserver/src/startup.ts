/**
 * Deadlines of start-up steps (--startup-step-timeout): a step that cannot complete — an etcd
 * that never answers, a watch cache that never syncs — fails start-up naming the step, instead of
 * a process that waits forever and says nothing. A slow step says it is still waiting.
 */
import type { Logger } from './log.js';

/** A start-up step that missed its deadline. */
export class StartupStepTimeoutError extends Error {}

/** How often a step that is taking long says so. */
const NOTICE_EVERY_MS = 10_000;

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * Runs `step`, failing with StartupStepTimeoutError after `timeoutMs` (the step itself is left to
 * settle on its own: start-up is abandoned, and what was started is closed by the caller).
 */
export async function startupStep<T>(log: Logger, name: string, timeoutMs: number, step: () => Promise<T>): Promise<T> {
  log.v(1, 'start-up step', { step: name });
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const notices = setInterval(() => log.info('start-up step still running', { step: name, seconds: Math.round((Date.now() - started) / 1000) }), NOTICE_EVERY_MS);
  try {
    return await Promise.race([
      step(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new StartupStepTimeoutError(`start-up step "${name}" did not complete within ${seconds(timeoutMs)} (--startup-step-timeout)`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    clearInterval(notices);
  }
}
