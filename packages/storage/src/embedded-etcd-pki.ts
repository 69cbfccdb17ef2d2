/**
 * Certificates of the embedded etcd (as k3s secures its embedded etcd): a CA of its own, a
 * certificate etcd serves its client and peer URLs with (both usages: etcd's gateway and its peer
 * listener use it as a client too), and the client certificate plinth presents. Made with openssl
 * once into `<etcd dir>/pki` (0700; keys 0600, whatever the umask) and reused across restarts;
 * the leaf certificates are made again (same CA) when they expire within 90 days, as k3s renews.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';

/** Client TLS material for the embedded etcd's client URL. */
export interface EtcdClientTLS {
  /** The CA etcd's serving certificate chains to. */
  ca: Buffer;
  /** plinth's client certificate and key. */
  cert: Buffer;
  key: Buffer;
}

/** The files etcd is started with, and what plinth connects with. */
export interface EtcdPki {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  client: EtcdClientTLS;
}

const LEAF_DAYS = 365;
const CA_DAYS = 3650;
/** Leaf certificates expiring sooner than this are made again at start. */
const RENEW_BEFORE_MS = 90 * 24 * 3600 * 1000;

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') throw new Error('openssl not found on PATH: the embedded etcd needs it for its certificates (apt-get install -y openssl), or pass --etcd-servers');
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() ?? err.message}`);
  }
}

function expiresSoon(file: string): boolean {
  try {
    return Date.parse(new X509Certificate(readFileSync(file)).validTo) - Date.now() < RENEW_BEFORE_MS;
  } catch {
    return true;
  }
}

/** An EC P-256 key, readable by its owner only from the moment it exists. */
function newKey(dir: string, name: string): void {
  rmSync(join(dir, name), { force: true });
  // Created empty with mode 0600 first: openssl then writes into a file nobody else can open.
  writeFileSync(join(dir, name), '', { mode: 0o600 });
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', name], dir);
  chmodSync(join(dir, name), 0o600);
}

/** A certificate for `name`'s key, signed by the CA, with the given extensions. */
function signLeaf(dir: string, name: string, subject: string, extensions: string[]): void {
  newKey(dir, `${name}.key`);
  writeFileSync(join(dir, `${name}.ext`), `${extensions.join('\n')}\n`);
  openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], dir);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', String(LEAF_DAYS), '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.crt`], dir);
  for (const f of [`${name}.csr`, `${name}.ext`, 'ca.srl']) rmSync(join(dir, f), { force: true });
}

/** The embedded etcd's certificates in `dir`, made when missing or about to expire. */
export function ensureEtcdPki(dir: string): EtcdPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = (name: string): string => join(dir, name);
  const haveCA = existsSync(file('ca.crt')) && existsSync(file('ca.key')) && !expiresSoon(file('ca.crt'));
  if (!haveCA) {
    newKey(dir, 'ca.key');
    const stamp = Math.floor(Date.now() / 1000);
    openssl(
      ['req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', String(CA_DAYS), '-subj', `/CN=plinth-etcd-ca@${stamp}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', 'ca.crt'],
      dir,
    );
  }
  const leafOk = (name: string): boolean => haveCA && existsSync(file(`${name}.crt`)) && existsSync(file(`${name}.key`)) && !expiresSoon(file(`${name}.crt`));
  if (!leafOk('server')) {
    // Loopback only: etcd listens on 127.0.0.1, and the peer listener dials itself by that name.
    signLeaf(dir, 'server', '/CN=plinth-etcd', ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment', 'extendedKeyUsage=serverAuth,clientAuth', 'subjectAltName=IP:127.0.0.1,DNS:localhost']);
  }
  if (!leafOk('client')) {
    signLeaf(dir, 'client', '/CN=plinth-apiserver', ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment', 'extendedKeyUsage=clientAuth']);
  }
  for (const key of ['ca.key', 'server.key', 'client.key']) chmodSync(file(key), 0o600);
  return {
    caFile: file('ca.crt'),
    serverCertFile: file('server.crt'),
    serverKeyFile: file('server.key'),
    client: { ca: readFileSync(file('ca.crt')), cert: readFileSync(file('client.crt')), key: readFileSync(file('client.key')) },
  };
}
