/**
 * The self-signed serving certificate for the embedded default (kube's --cert-dir behaviour):
 * a CA and a serving certificate it signs, for localhost, 127.0.0.1 and the bind address, made
 * with openssl once and reused while present.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { hostname } from 'node:os';

export interface ServingCert {
  certFile: string;
  keyFile: string;
  /** The CA that signed the serving certificate (what a kubeconfig trusts). */
  caFile: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') throw new Error('openssl not found on PATH: install it (apt-get install -y openssl) or pass --tls-cert-file/--tls-private-key-file');
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() ?? err.message}`);
  }
}

/** Returns the certificate in certDir, generating it when missing. */
export function ensureSelfSignedCert(certDir: string, bindAddress: string): ServingCert {
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const out: ServingCert = { certFile: join(certDir, 'apiserver.crt'), keyFile: join(certDir, 'apiserver.key'), caFile: join(certDir, 'ca.crt') };
  if (existsSync(out.certFile) && existsSync(out.keyFile) && existsSync(out.caFile)) return out;

  const sans = new Set(['DNS:localhost', 'IP:127.0.0.1', 'IP:::1', `DNS:${hostname()}`, 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc']);
  if (bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::') sans.add(isIP(bindAddress) ? `IP:${bindAddress}` : `DNS:${bindAddress}`);
  const stamp = Math.floor(Date.now() / 1000);
  writeFileSync(
    join(certDir, 'serving.ext'),
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=${[...sans].join(',')}`,
      '',
    ].join('\n'),
  );
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key'], certDir);
  openssl(
    ['req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', '3650', '-subj', `/CN=plinth-ca@${stamp}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', 'ca.crt'],
    certDir,
  );
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'apiserver.key'], certDir);
  openssl(['req', '-new', '-key', 'apiserver.key', '-subj', `/CN=plinth@${stamp}`, '-out', 'apiserver.csr'], certDir);
  openssl(['x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '365', '-sha256', '-extfile', 'serving.ext', '-out', 'apiserver.crt'], certDir);
  for (const f of ['apiserver.csr', 'serving.ext', 'ca.srl']) rmSync(join(certDir, f), { force: true });
  // Private keys are readable by their owner only, whatever the umask.
  for (const f of ['ca.key', 'apiserver.key']) chmodSync(join(certDir, f), 0o600);
  return out;
}
