/**
 * The worker thread behind {@link parseYamlOffLoop}: parses YAML request bodies with the same
 * {@link parseYaml} the event loop would use and posts back the value, or the error's kind and
 * message. One message in, one message out, in order.
 */
import { parentPort } from 'node:worker_threads';
import { isNestingTooDeep } from '@plinth/api';
import { parseYaml, YamlError } from './yaml.js';
import type { YamlJob, YamlJobResult } from './yaml-off-loop.js';

parentPort?.on('message', (job: YamlJob) => {
  let out: YamlJobResult;
  try {
    const duplicateKeys: string[] | undefined = job.duplicateKeys ? [] : undefined;
    const value = parseYaml(job.text, duplicateKeys ? { duplicateKeys } : {});
    out = { id: job.id, ok: true, value, ...(duplicateKeys ? { duplicateKeys } : {}) };
  } catch (e) {
    const kind = isNestingTooDeep(e) ? 'nesting' : e instanceof YamlError ? 'yaml' : 'other';
    out = { id: job.id, ok: false, kind, message: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(out);
});
