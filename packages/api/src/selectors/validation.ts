// Copies of the few k8s.io/apimachinery/pkg/util/validation checks selectors
// need (kept local so this folder has no imports from the rest of the package).
// Messages follow kube's text exactly, including its "'MyName',  or" spacing.

const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameMaxLength = 63;
const qualifiedNameRe = new RegExp('^' + qualifiedNameFmt + '$');

const labelValueFmt = '(' + qualifiedNameFmt + ')?';
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const labelValueMaxLength = 63;
const labelValueRe = new RegExp('^' + labelValueFmt + '$');

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = dns1123LabelFmt + '(\\.' + dns1123LabelFmt + ')*';
const dns1123SubdomainErrorMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainMaxLength = 253;
const dns1123SubdomainRe = new RegExp('^' + dns1123SubdomainFmt + '$');

function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = msg + ' (e.g. ';
  for (let i = 0; i < examples.length; i++) {
    if (i > 0) out += ' or ';
    out += `'${examples[i]}', `;
  }
  return out + `regex used for validation is '${fmt}')`;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > dns1123SubdomainMaxLength) errs.push(maxLenError(dns1123SubdomainMaxLength));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrorMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

/** validation.IsQualifiedName: optional DNS-subdomain prefix + '/' + name. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push('prefix part ' + m);
  } else {
    errs.push(
      'a qualified name ' +
        regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    );
    return errs;
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > qualifiedNameMaxLength) errs.push('name part ' + maxLenError(qualifiedNameMaxLength));
  if (!qualifiedNameRe.test(name)) {
    errs.push('name part ' + regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc'));
  }
  return errs;
}

/** validation.IsValidLabelValue. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > labelValueMaxLength) errs.push(maxLenError(labelValueMaxLength));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}
