/** The admin kubeconfig written for the operator: the serving CA, the server URL, a bearer token. */
import { writeFileSync, readFileSync, existsSync, mkdirSync, renameSync, chmodSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

/** The admin token, kept in the data dir so kubeconfigs stay valid across restarts. */
export function loadOrCreateAdminToken(file: string): string {
  if (existsSync(file)) {
    const t = readFileSync(file, 'utf8').trim();
    if (t) return t;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

export function writeKubeconfig(file: string, opts: { server: string; caPem: string | undefined; token: string; name?: string }): void {
  const name = opts.name ?? 'plinth';
  const cluster: Record<string, unknown> = { server: opts.server };
  if (opts.caPem) cluster['certificate-authority-data'] = Buffer.from(opts.caPem).toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: `${name}-admin`, user: { token: opts.token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin` } }],
    'current-context': name,
    preferences: {},
  };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Written aside and renamed into place: a client (or a test) polling for the file never reads
  // it half-written. The mode is set explicitly: writeFileSync's mode is subject to the umask.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, stringify(doc), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
