/** A small leveled JSON-line logger (kube's -v verbosity). Never given secrets. */

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Logged only at verbosity >= level. */
  v(level: number, msg: string, fields?: Record<string, unknown>): void;
  /** Changes the verbosity while running (kube's `PUT /debug/flags/v`); absent: fixed. */
  setVerbosity?(level: number): void;
}

export function createLogger(verbosity: number, out: NodeJS.WritableStream = process.stderr): Logger {
  const write = (level: string, msg: string, fields?: Record<string, unknown>): void => {
    out.write(`${JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
  return {
    info: (msg, fields) => write('info', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    v: (level, msg, fields) => {
      if (verbosity >= level) write('debug', msg, fields);
    },
    setVerbosity: (level) => {
      verbosity = level;
    },
  };
}
