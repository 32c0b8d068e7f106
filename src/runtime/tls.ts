import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import type { Config } from '../config.ts';

export interface TlsMaterial {
  key: string;
  cert: string;
  fingerprint256: string;
  generated: boolean;
  certFile: string;
}

/**
 * The configured certificate, or a self-signed one for localhost kept in the data directory (made
 * on first start and reused, so a client that pinned its fingerprint keeps working).
 */
export async function loadOrCreateCertificate(config: Config): Promise<TlsMaterial> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    const cert = fs.readFileSync(config.tlsCertFile, 'utf8');
    return {
      key: fs.readFileSync(config.tlsKeyFile, 'utf8'),
      cert,
      fingerprint256: new X509Certificate(cert).fingerprint256,
      generated: false,
      certFile: config.tlsCertFile,
    };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  let generated = false;
  if (!fs.existsSync(certFile) || !fs.existsSync(keyFile)) {
    // Loaded only when a certificate is made (once per data directory): it is slow to import.
    // A CommonJS module: its default export is module.exports, in Node and in the dist/ bundle alike.
    const { generate } = ((await import('selfsigned')) as unknown as { default: typeof import('selfsigned') }).default;
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: new Date(Date.now() + 825 * 86_400_000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(keyFile, pems.private, { mode: 0o600 });
    fs.writeFileSync(certFile, pems.cert);
    generated = true;
  }
  const cert = fs.readFileSync(certFile, 'utf8');
  return { key: fs.readFileSync(keyFile, 'utf8'), cert, fingerprint256: new X509Certificate(cert).fingerprint256, generated, certFile };
}
