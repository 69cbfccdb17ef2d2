/**
 * Command-line flags with kube-apiserver's names and pflag syntax (`--name=value`, `--name value`,
 * bare booleans, `-v`). Unknown flags and bad values fail fast with a clear message.
 */
import { isIP } from 'node:net';

export interface ServerOptions {
  securePort: number;
  bindAddress: string;
  etcdServers: string[];
  etcdPrefix: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  certDir: string;
  tokenAuthFile: string;
  verbosity: number;
  dataDir: string;
  watchCache: boolean;
  /** ms; 0 disables. */
  etcdCompactionInterval: number;
  /** ms */
  shutdownDelayDuration: number;
  /** 0: no limit. */
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  help: boolean;
}

type Kind = 'int' | 'string' | 'strings' | 'bool' | 'ip' | 'duration';

interface FlagSpec {
  name: string;
  kind: Kind;
  key: keyof ServerOptions;
  usage: string;
  default: string;
}

const SPECS: FlagSpec[] = [
  { name: 'secure-port', kind: 'int', key: 'securePort', default: '6443', usage: 'The port on which to serve HTTPS with authentication and authorization.' },
  { name: 'bind-address', kind: 'ip', key: 'bindAddress', default: '0.0.0.0', usage: 'The IP address on which to listen for the --secure-port port.' },
  { name: 'etcd-servers', kind: 'strings', key: 'etcdServers', default: '', usage: 'List of etcd servers to connect with (scheme://ip:port), comma separated. Without it, an embedded etcd runs under --data-dir.' },
  { name: 'etcd-prefix', kind: 'string', key: 'etcdPrefix', default: '/registry', usage: 'The prefix to prepend to all resource paths in etcd.' },
  { name: 'tls-cert-file', kind: 'string', key: 'tlsCertFile', default: '', usage: 'File containing the default x509 certificate for HTTPS.' },
  { name: 'tls-private-key-file', kind: 'string', key: 'tlsPrivateKeyFile', default: '', usage: 'File containing the default x509 private key matching --tls-cert-file.' },
  { name: 'cert-dir', kind: 'string', key: 'certDir', default: '', usage: 'The directory where the self-signed TLS certificates are (default <data-dir>/certs). Ignored if --tls-cert-file and --tls-private-key-file are provided.' },
  { name: 'token-auth-file', kind: 'string', key: 'tokenAuthFile', default: '', usage: 'If set, the file that will be used to secure the secure port of the API server via token authentication.' },
  { name: 'v', kind: 'int', key: 'verbosity', default: '0', usage: 'number for the log level verbosity' },
  { name: 'data-dir', kind: 'string', key: 'dataDir', default: './data', usage: 'Directory for the embedded etcd, generated certificates, the admin token and admin.kubeconfig.' },
  { name: 'watch-cache', kind: 'bool', key: 'watchCache', default: 'true', usage: 'Enable watch caching in the apiserver.' },
  { name: 'etcd-compaction-interval', kind: 'duration', key: 'etcdCompactionInterval', default: '5m', usage: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.' },
  { name: 'max-requests-inflight', kind: 'int', key: 'maxRequestsInflight', default: '400', usage: 'The maximum number of non-mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.' },
  { name: 'max-mutating-requests-inflight', kind: 'int', key: 'maxMutatingRequestsInflight', default: '200', usage: 'The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.' },
  { name: 'shutdown-delay-duration', kind: 'duration', key: 'shutdownDelayDuration', default: '0s', usage: 'Time to delay the termination. During that time /readyz fails while the server keeps serving.' },
  { name: 'help', kind: 'bool', key: 'help', default: 'false', usage: 'help for plinth-apiserver' },
];

export class FlagError extends Error {}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos !== text.length || text.length === 0) throw new Error(`time: invalid duration "${text}"`);
  return total;
}

function convert(spec: FlagSpec, raw: string): ServerOptions[keyof ServerOptions] {
  const bad = (why: string): FlagError => new FlagError(`invalid argument "${raw}" for "--${spec.name}" flag: ${why}`);
  switch (spec.kind) {
    case 'int': {
      if (!/^-?\d+$/.test(raw)) throw bad(`strconv.ParseInt: parsing "${raw}": invalid syntax`);
      const n = Number(raw);
      if (spec.name === 'secure-port' && (n < 0 || n > 65535)) throw bad('must be a valid port number between 0 and 65535');
      return n;
    }
    case 'bool':
      if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(raw)) return true;
      if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(raw)) return false;
      throw bad(`strconv.ParseBool: parsing "${raw}": invalid syntax`);
    case 'ip':
      if (!isIP(raw)) throw bad('failed to parse IP');
      return raw;
    case 'strings': {
      const list = raw.split(',').map((x) => x.trim()).filter(Boolean);
      if (spec.name === 'etcd-servers') {
        for (const u of list) {
          try {
            const url = new URL(u);
            if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
          } catch {
            throw bad(`"${u}" is not a URL like http://127.0.0.1:2379`);
          }
        }
      }
      return list;
    }
    case 'duration':
      try {
        return parseDuration(raw);
      } catch (e) {
        throw bad((e as Error).message);
      }
    default:
      return raw;
  }
}

export function parseFlags(argv: string[]): ServerOptions {
  const byName = new Map(SPECS.map((s) => [s.name, s]));
  const opts = {} as Record<keyof ServerOptions, unknown>;
  for (const s of SPECS) opts[s.key] = s.kind === 'strings' && s.default === '' ? [] : convert(s, s.default);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-' || arg === '--') throw new FlagError(`unexpected argument "${arg}": plinth-apiserver takes flags only`);
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const spec = byName.get(name === 'h' ? 'help' : name);
    if (!spec) throw new FlagError(`unknown flag: ${arg.startsWith('--') ? '--' : '-'}${name}`);
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.kind === 'bool') value = 'true';
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new FlagError(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    opts[spec.key] = convert(spec, value);
  }
  const o = opts as unknown as ServerOptions;
  if (!!o.tlsCertFile !== !!o.tlsPrivateKeyFile) throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together');
  if (o.etcdCompactionInterval < 0) throw new FlagError('--etcd-compaction-interval must not be negative');
  if (o.maxRequestsInflight < 0 || o.maxMutatingRequestsInflight < 0) throw new FlagError('--max-requests-inflight and --max-mutating-requests-inflight must not be negative');
  return o;
}

export function usage(): string {
  const lines = ['Usage: plinth-apiserver [flags]', '', 'Flags:'];
  for (const s of SPECS) lines.push(`      --${s.name}${s.kind === 'bool' ? '' : ` ${s.kind}`}`.padEnd(44) + `${s.usage}${s.default ? ` (default ${s.kind === 'string' ? JSON.stringify(s.default) : s.default})` : ''}`);
  return lines.join('\n');
}
