/**
 * metav1.MicroTime in JSON, as apimachinery decodes and encodes it: `time.Parse(RFC3339Micro, s)`
 * on the way in — the layout `2006-01-02T15:04:05.000000Z07:00` demands exactly six fractional
 * digits, so `…T10:00:00Z` or nine digits are rejected — and `t.UTC().Format(RFC3339Micro)` on
 * the way out, so an offset becomes `Z`. (metav1.Time, by contrast, takes any RFC 3339 time.)
 */

export const RFC3339_MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

/** Go's `*time.ParseError` text for a MicroTime that does not parse. */
export class MicroTimeError extends Error {
  constructor(value: string, detail: string) {
    super(`parsing time ${JSON.stringify(value)}${detail}`);
    this.name = 'MicroTimeError';
  }
}

const HEAD = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/;
const FRACTION = /^\.(\d{6})/;
const ZONE = /^(?:Z|([+-])(\d{2}):(\d{2}))$/;

const cannotParse = (value: string, elem: string, layoutElem: string): MicroTimeError =>
  new MicroTimeError(value, ` as "${RFC3339_MICRO_LAYOUT}": cannot parse ${JSON.stringify(elem)} as ${JSON.stringify(layoutElem)}`);

function daysIn(month: number, year: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parses a MicroTime string and returns its canonical form (UTC, six digits, `Z`). Throws
 * MicroTimeError with Go's wording: the first layout element that does not match, or the field
 * that is out of range.
 */
export function canonicalMicroTime(value: string): string {
  const head = HEAD.exec(value);
  if (!head) throw cannotParse(value, value, '2006');
  const [year, month, day, hour, minute, second] = head.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  let rest = value.slice(head[0].length);
  const frac = FRACTION.exec(rest);
  if (!frac) throw cannotParse(value, rest, '.000000');
  rest = rest.slice(frac[0].length);
  const zone = ZONE.exec(rest);
  if (!zone) throw cannotParse(value, rest, 'Z07:00');
  // Go checks the ranges while parsing (month, hour, minute, second), the day once all is read.
  if (month < 1 || month > 12) throw new MicroTimeError(value, ': month out of range');
  if (hour > 23) throw new MicroTimeError(value, ': hour out of range');
  if (minute > 59) throw new MicroTimeError(value, ': minute out of range');
  if (second > 59) throw new MicroTimeError(value, ': second out of range');
  if (zone[1] && (Number(zone[2]) > 23 || Number(zone[3]) > 59)) throw new MicroTimeError(value, ': time zone offset hour out of range');
  if (day < 1 || day > daysIn(month, year)) throw new MicroTimeError(value, ': day out of range');
  const offsetMin = zone[1] ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) : 0;
  // setUTCFullYear, not Date.UTC: the latter maps years 0–99 to 1900–1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute - offsetMin, second, 0);
  return `${d.toISOString().slice(0, 19)}.${frac[1]}Z`;
}
