/**
 * A kubeconfig read the way client-go's clientcmd reads one for a webhook (kube's
 * `webhookutil.LoadKubeconfig`: an explicit path, no overrides): the `current-context` names the
 * context, whose `cluster` is the remote service and whose `user` is how plinth identifies itself
 * to it. Relative file paths are resolved against the kubeconfig's directory. Everything client-go
 * would reject is rejected here, at start-up, with the whole list of problems.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from '@plinth/api';

/** What a webhook client needs from a kubeconfig: where to connect and how to authenticate. */
export interface RestClientConfig {
  /** The exact URL requests are POSTed to (client-go: the server's path, cleaned; query dropped). */
  url: URL;
  /** PEM of the CAs that verify the server; undefined: the host's roots. */
  ca?: Buffer;
  /** `insecure-skip-tls-verify`: the server's certificate is not verified. */
  insecureSkipTLSVerify: boolean;
  /** `tls-server-name`: the name verified in the server certificate (and sent as SNI). */
  tlsServerName?: string;
  /** PEM client certificate and key (TLS only). */
  clientCert?: { cert: Buffer; key: Buffer };
  /** A fixed bearer token (`token`), sent unless `bearerTokenFile` is set. */
  bearerToken?: string;
  /** `tokenFile`: read again at most once a minute, as client-go's cached file token source. */
  bearerTokenFile?: string;
  basicAuth?: { username: string; password: string };
}

/** A kubeconfig client-go would not load; `problems` lists every reason. */
export class KubeconfigError extends Error {
  readonly problems: readonly string[];
  constructor(file: string, problems: string[]) {
    super(`${file}: invalid configuration: ${problems.join(', ')}`);
    this.name = 'KubeconfigError';
    this.problems = problems;
  }
}

type Obj = Record<string, unknown>;

/** The named entries of one kubeconfig list (`clusters`, `users`, `contexts`); duplicates are errors. */
function namedEntries(doc: Obj, list: string, field: string, problems: string[]): Map<string, Obj> {
  const out = new Map<string, Obj>();
  const raw = doc[list];
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) {
    problems.push(`${list} must be a list`);
    return out;
  }
  for (const item of raw) {
    if (!isPlainObject(item) || typeof item['name'] !== 'string') {
      problems.push(`${list} entries need a string name`);
      continue;
    }
    // client-go's conversion refuses a list with a repeated name.
    if (out.has(item['name'])) problems.push(`duplicate name ${JSON.stringify(item['name'])} in ${list}`);
    const body = item[field];
    if (body !== undefined && body !== null && !isPlainObject(body)) problems.push(`${list}[${JSON.stringify(item['name'])}].${field} must be an object`);
    out.set(item['name'], isPlainObject(body) ? body : {});
  }
  return out;
}

function str(o: Obj, key: string, where: string, problems: string[]): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') {
    problems.push(`${where}.${key} must be a string`);
    return '';
  }
  return v;
}

/** `*-data` fields are base64 in the file (Go's []byte JSON encoding). */
function data(o: Obj, key: string, where: string, problems: string[]): Buffer | undefined {
  const v = str(o, key, where, problems);
  if (!v) return undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v.replace(/\s+/g, '')) || v.replace(/\s+/g, '').length % 4 !== 0) {
    problems.push(`${where}.${key} is not valid base64`);
    return undefined;
  }
  return Buffer.from(v, 'base64');
}

/** clientcmd's ResolvePaths: relative references are relative to the kubeconfig's directory. */
function resolvePath(p: string, baseDir: string): string {
  return p && !isAbsolute(p) ? join(baseDir, p) : p;
}

/** client-go posts to `path.Join(serverPath, "/")`: cleaned, no trailing slash, "/" when empty. */
function requestPath(pathname: string): string {
  const cleaned = posix.normalize(`/${pathname}`);
  return cleaned.length > 1 && cleaned.endsWith('/') ? cleaned.slice(0, -1) : cleaned;
}

export interface KubeconfigReadOptions {
  /** Reads a referenced file (tests substitute it); default: the file system. */
  readFile?: (path: string) => Buffer;
}

/**
 * Resolves kubeconfig text (YAML or JSON) into a client config, as client-go's
 * `DirectClientConfig.ClientConfig()` does with no overrides. `source` names the file in errors;
 * `baseDir` anchors relative paths. Throws a KubeconfigError listing every problem.
 */
export function resolveKubeconfig(text: string, source: string, baseDir: string, opts: KubeconfigReadOptions = {}): RestClientConfig {
  const readFile = opts.readFile ?? ((p: string) => readFileSync(p));
  const problems: string[] = [];
  let doc: unknown;
  try {
    doc = text.trim() === '' ? {} : parseYaml(text);
  } catch (e) {
    // Only the position: the parser's message quotes the offending line, which may hold a secret.
    const pos = (e as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    throw new KubeconfigError(source, [`cannot parse as YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`]);
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isPlainObject(doc)) throw new KubeconfigError(source, ['the document must be a mapping']);

  const clusters = namedEntries(doc, 'clusters', 'cluster', problems);
  const users = namedEntries(doc, 'users', 'user', problems);
  const contexts = namedEntries(doc, 'contexts', 'context', problems);
  const contextName = str(doc, 'current-context', 'kubeconfig', problems);
  if (problems.length > 0) throw new KubeconfigError(source, problems);

  // No current-context means no context at all: client-go does not fall back to the first one.
  let context: Obj = {};
  if (contextName) {
    const c = contexts.get(contextName);
    if (!c) throw new KubeconfigError(source, [`context was not found for specified context: ${contextName}`]);
    context = c;
  }
  const clusterName = str(context, 'cluster', `contexts[${JSON.stringify(contextName)}]`, problems);
  const userName = str(context, 'user', `contexts[${JSON.stringify(contextName)}]`, problems);
  if (clusterName && !clusters.has(clusterName)) problems.push(`cluster ${JSON.stringify(clusterName)} does not exist`);
  if (userName && !users.has(userName)) problems.push(`auth info ${JSON.stringify(userName)} does not exist`);
  if (problems.length > 0) throw new KubeconfigError(source, problems);
  const cluster = clusters.get(clusterName) ?? {};
  const user = users.get(userName) ?? {};

  const cw = `clusters[${JSON.stringify(clusterName)}]`;
  const server = str(cluster, 'server', cw, problems);
  const caFile = resolvePath(str(cluster, 'certificate-authority', cw, problems), baseDir);
  const caData = data(cluster, 'certificate-authority-data', cw, problems);
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  if (cluster['insecure-skip-tls-verify'] !== undefined && typeof cluster['insecure-skip-tls-verify'] !== 'boolean') problems.push(`${cw}.insecure-skip-tls-verify must be a boolean`);
  const tlsServerName = str(cluster, 'tls-server-name', cw, problems);
  if (str(cluster, 'proxy-url', cw, problems)) problems.push(`${cw}.proxy-url is not supported by plinth`);

  const uw = `users[${JSON.stringify(userName)}]`;
  const certFile = resolvePath(str(user, 'client-certificate', uw, problems), baseDir);
  const certData = data(user, 'client-certificate-data', uw, problems);
  const keyFile = resolvePath(str(user, 'client-key', uw, problems), baseDir);
  const keyData = data(user, 'client-key-data', uw, problems);
  const token = str(user, 'token', uw, problems);
  const tokenFile = resolvePath(str(user, 'tokenFile', uw, problems), baseDir);
  const username = str(user, 'username', uw, problems);
  const password = str(user, 'password', uw, problems);
  for (const unsupported of ['exec', 'auth-provider', 'as', 'as-groups', 'as-uid', 'as-user-extra']) {
    if (user[unsupported] !== undefined && user[unsupported] !== null) problems.push(`${uw}.${unsupported} is not supported by plinth`);
  }

  // validateClusterInfo: an entirely empty cluster is "no configuration" (nothing else to report).
  if (!server && !caFile && !caData && !insecure && !tlsServerName) {
    if (problems.length === 0) throw new KubeconfigError(source, ['no configuration has been provided']);
  }
  if (!server) problems.push(clusterName ? `no server found for cluster ${JSON.stringify(clusterName)}` : 'default cluster has no server defined');
  if (caFile && caData) problems.push(`certificate-authority-data and certificate-authority are both specified for ${clusterName}`);

  // validateAuthInfo.
  if (certFile || certData) {
    if (certFile && certData) problems.push(`client-cert-data and client-cert are both specified for ${userName}`);
    if (keyFile && keyData) problems.push(`client-key-data and client-key are both specified for ${userName}`);
    if (!keyFile && !keyData) problems.push(`client-key-data or client-key must be specified for ${userName} to use the clientCert authentication method`);
  }
  if (token && (username || password)) problems.push(`more than one authentication method found for ${userName}; found [token basicAuth], only one is allowed`);

  let url: URL | undefined;
  if (server) {
    // client-go: a host without a scheme is plain http (no TLS material configured at that point).
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `http://${server}`;
    try {
      url = new URL(withScheme);
    } catch {
      problems.push(`server ${JSON.stringify(server)} is not a valid URL`);
    }
    if (url && url.protocol !== 'https:' && url.protocol !== 'http:') problems.push(`server ${JSON.stringify(server)}: scheme must be https or http`);
  }

  const read = (p: string, what: string, owner: string): Buffer | undefined => {
    if (!p) return undefined;
    try {
      return readFile(p);
    } catch (e) {
      problems.push(`unable to read ${what} ${p} for ${owner} due to ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return undefined;
    }
  };
  const tls = url?.protocol === 'https:';
  const ca = caData ?? read(caFile, 'certificate-authority', clusterName);
  // client-go reads the user's credentials only for a TLS transport: over http nothing is sent.
  const cert = tls ? (certData ?? read(certFile, 'client-cert', userName)) : undefined;
  const key = tls && (certFile || certData) ? (keyData ?? read(keyFile, 'client-key', userName)) : undefined;
  let bearerToken = token || undefined;
  if (tls && !token && tokenFile) {
    const t = read(tokenFile, 'tokenFile', userName);
    if (t && t.toString('utf8').trim() === '') problems.push(`read empty token from file ${tokenFile}`);
    bearerToken = t?.toString('utf8').trim() || undefined;
  }
  if (tls && insecure && ca) problems.push('specifying a root certificates file with the insecure flag is not allowed');
  if (problems.length > 0) throw new KubeconfigError(source, problems);

  const out: RestClientConfig = { url: url!, insecureSkipTLSVerify: tls && insecure };
  out.url.search = '';
  out.url.hash = '';
  out.url.pathname = requestPath(out.url.pathname);
  if (!tls) return out;
  if (ca) out.ca = ca;
  if (tlsServerName) out.tlsServerName = tlsServerName;
  if (cert && key) out.clientCert = { cert, key };
  if (bearerToken) out.bearerToken = bearerToken;
  if (tokenFile) out.bearerTokenFile = tokenFile;
  if (!bearerToken && (username || password)) out.basicAuth = { username, password };
  return out;
}

/** Reads and resolves a kubeconfig file (`--authentication-token-webhook-config-file`). */
export function loadKubeconfig(file: string): RestClientConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeconfigError(file, [`cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
  return resolveKubeconfig(text, file, dirname(resolve(file)));
}
