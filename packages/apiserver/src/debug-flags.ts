/**
 * kube's `/debug/flags` (routes.DebugFlags, installed with `--profiling`): an index of the flags
 * that can be changed while running, and `PUT /debug/flags/v` with a number as its body setting
 * the log verbosity (`-v`), answered in plain text as kube's StringFlagPutHandler and GlogSetter
 * answer; any other method is 406 `unsupported http method`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from './http.js';
import type { Logger } from './log.js';

/** kube's writePlainText: `text/plain`, the text and a newline. */
function writePlainText(res: ServerResponse, code: number, text: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(`${text}\n`);
}

const INDEX = `<html>
<head>
<title>/debug/flags/</title>
</head>
<body>
/debug/flags/<br>
<br>
flags:<br>
<table>
<tr><td><a href="v">v</a></td><td>the log verbosity: PUT a number</td></tr>
</table>
</body>
</html>
`;

export interface DebugFlagsHandler {
  (req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function createDebugFlagsHandler(log: Logger): DebugFlagsHandler {
  return async (req, res, path) => {
    if (path !== '/debug/flags/v') {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(INDEX);
      return;
    }
    if (req.method !== 'PUT') return writePlainText(res, 406, 'unsupported http method');
    const value = (await readBody(req, 1024)).toString('utf8');
    // klog's Level.Set: strconv.ParseUint(value, 10, 32).
    const valid = /^\d+$/.test(value) && Number(value) <= 0xffffffff;
    if (!valid) {
      const why = /^\d+$/.test(value) ? 'value out of range' : 'invalid syntax';
      return writePlainText(res, 400, `failed set klog.logging.verbosity ${value}: strconv.ParseUint: parsing ${JSON.stringify(value)}: ${why}`);
    }
    log.setVerbosity?.(Number(value));
    writePlainText(res, 200, `successfully set klog.logging.verbosity to ${value}`);
  };
}
