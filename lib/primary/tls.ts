// The certificate and key HTTPS is served with (http.tls_*): the configured
// files, or a self-signed pair generated once and kept in the data directory.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import { access, readFile, stat } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { generate } from 'selfsigned';
import type { Config } from '../config/index.js';
import { firstLine } from '../first-line.js';
import type { Logger } from '../log.js';
import { dataDir } from '../paths.js';
import { StartupError } from '../startup-error.js';
import { PRIVATE, writeAtomically } from '../write-atomically.js';

export interface TlsFiles {
  cert: string;
  key: string;
}

/** Undefined when TLS is off. Throws a StartupError for unusable files. */
export async function tlsFiles(config: Config, log: Logger): Promise<TlsFiles | undefined> {
  const { tls_enable, tls_cert, tls_key } = config.http;
  if (!tls_enable) return undefined;
  if (tls_cert !== undefined || tls_key !== undefined) {
    if (tls_cert === undefined || tls_key === undefined) throw new StartupError('http.tls_cert and http.tls_key must be given together');
    // One after the other: with both unreadable, the line names the certificate, every time.
    const read = (name: string, path: string) =>
      readFile(path).catch(() => {
        throw new StartupError(`${name}: cannot read ${path}`);
      });
    const cert = await read('http.tls_cert', tls_cert);
    const key = await read('http.tls_key', tls_key);
    usablePair({ cert: tls_cert, key: tls_key }, cert, key);
    return { cert: tls_cert, key: tls_key };
  }
  const files = await selfSigned();
  log.warn({ cert: files.cert }, 'http.tls_cert and http.tls_key are not set: serving HTTPS with a self-signed certificate, which clients will not trust');
  return files;
}

/**
 * Checks here, before any worker starts, what each worker would find when it
 * made its server: a file that is not a PEM certificate or private key, or a
 * key that is not the certificate's, would otherwise end every worker.
 */
function usablePair(files: TlsFiles, cert: Buffer, key: Buffer): void {
  try {
    new X509Certificate(cert);
  } catch (e) {
    throw new StartupError(`http.tls_cert: ${files.cert} is not a PEM certificate (${firstLine(e)})`);
  }
  try {
    createPrivateKey(key);
  } catch (e) {
    throw new StartupError(`http.tls_key: ${files.key} is not a PEM private key (${firstLine(e)})`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    throw new StartupError(`http.tls_key: ${files.key} is not the key of the certificate in ${files.cert} (${firstLine(e)})`);
  }
}

/** One pair per machine, so restarts keep the certificate clients may have pinned. */
async function selfSigned(): Promise<TlsFiles> {
  const dir = join(dataDir(), 'tls');
  const files = { cert: join(dir, 'self-signed.crt'), key: join(dir, 'self-signed.key') };
  const existing = await Promise.all([readFile(files.cert), readFile(files.key)]).catch(() => undefined);
  if (existing) return files;
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
    keySize: 2048,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] }],
  });
  try {
    // Each file whole or not at all: a pair cut short by a crash is made anew next time, not read half-written.
    await writeAtomically(files.key, pems.private, PRIVATE);
    await writeAtomically(files.cert, pems.cert);
  } catch (e) {
    throw new StartupError(
      `cannot keep a self-signed TLS certificate in ${dir}: ${await unwritable(dir, e)}; set http.tls_cert and http.tls_key, or make ${dataDir()} writable (or point RT_DATA_DIR elsewhere)`,
    );
  }
  return files;
}

/**
 * Why `dir` could not be made or written, named by the directory at fault:
 * Node's recursive mkdir reports ENOENT on a read-only file system, which
 * points at the wrong problem.
 */
async function unwritable(dir: string, error: unknown): Promise<string> {
  for (let at = dir; ; at = dirname(at)) {
    const info = await stat(at).catch(() => undefined);
    if (info && !info.isDirectory()) return `${at} is not a directory`;
    if (info) {
      const denied = await access(at, constants.W_OK).then(
        () => undefined,
        (e: NodeJS.ErrnoException) => e.code ?? 'denied',
      );
      if (denied !== undefined) return `${at} is not writable (${denied})`;
      break;
    }
    if (dirname(at) === at) break;
  }
  return (error as NodeJS.ErrnoException).code ?? firstLine(error);
}
