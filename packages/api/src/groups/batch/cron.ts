/**
 * The schedule check of kube 1.24's CronJob validation: robfig/cron v3's ParseStandard (five
 * fields, month and weekday names, `?`, ranges and steps, the `@yearly`…`@hourly` and `@every`
 * descriptors, an optional `TZ=`/`CRON_TZ=` prefix naming a known time zone), with its error texts.
 */

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTHS = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

class CronError extends Error {}

/** Go's strconv.Atoi, with robfig's messages for a bad or negative number. */
function mustParseInt(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const n = Number.parseInt(expr, 10);
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names?: Readonly<Record<string, number>>): number {
  const named = names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

function checkRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
  } else {
    start = parseIntOrName(lowAndHigh[0]!, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, r.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    if (lowAndHigh.length === 1) end = r.max;
  } else if (rangeAndStep.length > 2) {
    throw new CronError(`too many slashes: ${expr}`);
  }
  if (start < r.min) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
}

function isTimeZone(name: string): boolean {
  if (name === '' || name === 'UTC' || name === 'Local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Go's time.ParseDuration, enough to accept or refuse `@every <duration>`. */
const GO_DURATION = /^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^0$/;

/** robfig/cron v3 ParseStandard: undefined when the schedule parses, else its error text. */
export function cronScheduleError(schedule: string): string | undefined {
  try {
    let spec = schedule;
    if (spec.length === 0) throw new CronError('empty spec string');
    if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
      const i = spec.indexOf(' ');
      const eq = spec.indexOf('=');
      const name = spec.slice(eq + 1, i < 0 ? undefined : i);
      if (!isTimeZone(name)) throw new CronError(`provided bad location ${name}: unknown time zone ${name}`);
      spec = i < 0 ? '' : spec.slice(i).trim();
    }
    if (spec.startsWith('@')) {
      if (DESCRIPTORS.has(spec)) return undefined;
      if (spec.startsWith('@every ')) {
        const d = spec.slice('@every '.length);
        if (!GO_DURATION.test(d)) throw new CronError(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(d)}`);
        return undefined;
      }
      throw new CronError(`unrecognized descriptor: ${spec}`);
    }
    const fields = spec.split(/[ \t\n\v\f\r]+/).filter((f) => f !== '');
    if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
    fields.forEach((f, i) => f.split(',').forEach((part) => checkRange(part, FIELDS[i]!)));
    return undefined;
  } catch (e) {
    if (e instanceof CronError) return e.message;
    throw e;
  }
}
