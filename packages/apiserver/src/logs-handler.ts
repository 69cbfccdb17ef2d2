/**
 * kube's /logs handler (pkg/routes/logs.go, `--enable-logs-handler`, default true): `/logs/` lists
 * the log directory and `/logs/<path>` serves a file or lists a sub-directory, as Go's
 * http.ServeFile does (an HTML `<pre>` listing, directories with a trailing `/`, a directory named
 * without its `/` redirected, Go's plain-text errors). Authorized as non-resource URLs by the chain.
 *
 * Stricter than kube, on purpose: nothing outside the directory is ever read — a `..` segment
 * (also percent-encoded) is Go's 400, a symbolic link leading out of the directory and anything
 * that is not a regular file or directory (a FIFO would block) are 404. Files are streamed.
 */
import { createReadStream } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, sep } from 'node:path';

/** Go's http.Error: a plain-text message and a newline. */
export function writePlainError(res: ServerResponse, code: number, message: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(`${message}\n`);
}

/** Go's localRedirect: 301 to a relative location. */
function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 301;
  res.setHeader('Location', location);
  res.end();
}

/** Go's mime.TypeByExtension for what a log directory holds; others are sniffed. */
const TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.xml': 'text/xml; charset=utf-8',
  '.gz': 'application/gzip',
  '.txt': 'text/plain; charset=utf-8',
};

/** Go's DetectContentType, for log files: text unless the first bytes hold binary control bytes. */
function sniff(head: Buffer): string {
  for (const b of head) if (b < 0x09 || (b > 0x0d && b < 0x20 && b !== 0x1b)) return 'application/octet-stream';
  return 'text/plain; charset=utf-8';
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]!);

/** Go's url.URL{Path: name}.String() for a listing's href (a `:` in the first segment gets `./`). */
function hrefOf(name: string): string {
  const escaped = encodeURI(name).replace(/[?#]/g, (c) => encodeURIComponent(c));
  return /^[^/]*:/.test(name) ? `./${escaped}` : escaped;
}

async function listDirectory(res: ServerResponse, dir: string, mtime: Date): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = entries.map((e) => {
    const name = e.isDirectory() ? `${e.name}/` : e.name;
    return `<a href="${hrefOf(name)}">${escapeHtml(name)}</a>\n`;
  });
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Last-Modified', mtime.toUTCString());
  res.end(`<pre>\n${lines.join('')}</pre>\n`);
}

async function serveFile(req: IncomingMessage, res: ServerResponse, file: string, size: number, mtime: Date): Promise<void> {
  const fh = await open(file, 'r');
  let type = TYPES[extname(file).toLowerCase()];
  if (!type) {
    const head = Buffer.alloc(Math.min(512, size));
    await fh.read(head, 0, head.length, 0);
    type = sniff(head);
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Last-Modified', mtime.toUTCString());
  res.setHeader('Content-Length', String(size));
  if (req.method === 'HEAD') {
    await fh.close();
    res.end();
    return;
  }
  // The size stat saw: a log growing meanwhile is cut there, as Content-Length says.
  const stream = createReadStream('', { fd: fh, start: 0, end: Math.max(0, size - 1), autoClose: true });
  if (size === 0) {
    stream.destroy();
    res.end();
    return;
  }
  await new Promise<void>((resolve) => {
    stream.on('error', () => {
      res.destroy();
      resolve();
    });
    res.on('close', () => {
      stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}

export interface LogsHandler {
  (req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

/** Serves `/logs` and what is under it from `dir` (kube: /var/log). `path` is the raw request path. */
export function createLogsHandler(dir: string): LogsHandler {
  return async (req, res, path) => {
    if (path === '/logs') return redirect(res, 'logs/');
    let rel: string[];
    try {
      rel = path.slice('/logs/'.length).split('/').map((s) => decodeURIComponent(s));
    } catch {
      return writePlainError(res, 400, 'invalid URL path');
    }
    // Go's containsDotDot on the decoded path (an encoded "/" is a separator there too).
    const segments = rel.join('/').split('/');
    if (segments.includes('..')) return writePlainError(res, 400, 'invalid URL path');
    if (segments.some((s) => s.includes('\0') || s.includes('\\'))) return writePlainError(res, 404, '404 page not found');
    if (segments.some((s) => Buffer.byteLength(s) > 255)) return writePlainError(res, 404, 'file not found');
    const wanted = join(dir, ...segments.filter((s) => s !== '' && s !== '.'));
    let root: string;
    let target: string;
    try {
      root = await realpath(dir);
      target = await realpath(wanted);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return writePlainError(res, 404, '404 page not found');
      if (code === 'EACCES' || code === 'EPERM') return writePlainError(res, 403, '403 Forbidden');
      if (code === 'ENAMETOOLONG') return writePlainError(res, 404, 'file not found');
      return writePlainError(res, 500, '500 Internal Server Error');
    }
    // A symbolic link out of the directory is not followed (kube's would be).
    if (target !== root && !target.startsWith(root.endsWith(sep) ? root : root + sep)) return writePlainError(res, 404, '404 page not found');
    try {
      const st = await stat(target);
      if (st.isDirectory()) {
        if (!path.endsWith('/')) return redirect(res, `${segments[segments.length - 1]}/`);
        return await listDirectory(res, target, st.mtime);
      }
      if (!st.isFile()) return writePlainError(res, 404, '404 page not found');
      return await serveFile(req, res, target, st.size, st.mtime);
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') return writePlainError(res, 403, '403 Forbidden');
      if (code === 'ENOENT') return writePlainError(res, 404, '404 page not found');
      return writePlainError(res, 500, '500 Internal Server Error');
    }
  };
}
