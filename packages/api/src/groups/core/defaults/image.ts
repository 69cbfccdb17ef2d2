/**
 * The tag of a container image as kube 1.24's defaulting reads it (pkg/util/parsers ParseImageName
 * over github.com/docker/distribution/reference ParseNormalizedNamed): `latest` when neither a tag
 * nor a digest is given, undefined when the reference does not parse.
 */

const alphaNumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]*)';
const nameComponent = `${alphaNumeric}(?:${separator}${alphaNumeric})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `${domainComponent}(?:\\.${domainComponent})*(?::[0-9]+)?`;
const name = `(?:${domain}/)?${nameComponent}(?:/${nameComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const referenceRe = new RegExp(`^(${name})(?::(${tag}))?(?:@(${digest}))?$`);
const anchoredIdentifierRe = /^[a-f0-9]{64}$/;
const NAME_TOTAL_LENGTH_MAX = 255;
const DIGEST_HEX_LENGTHS: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };

/** docker's `splitDockerDomain`: the registry and the rest, with docker.io/library/ filled in. */
function splitDockerDomain(ref: string): [string, string] {
  const i = ref.indexOf('/');
  let dom: string;
  let rest: string;
  if (i === -1 || (!/[.:]/.test(ref.slice(0, i)) && ref.slice(0, i) !== 'localhost' && ref.slice(0, i).toLowerCase() === ref.slice(0, i))) {
    dom = 'docker.io';
    rest = ref;
  } else {
    dom = ref.slice(0, i);
    rest = ref.slice(i + 1);
  }
  if (dom === 'index.docker.io') dom = 'docker.io';
  if (dom === 'docker.io' && !rest.includes('/')) rest = `library/${rest}`;
  return [dom, rest];
}

/** The image's tag (`latest` when none and no digest), or undefined when it is not a valid reference. */
export function imageTag(image: string): string | undefined {
  if (anchoredIdentifierRe.test(image)) return undefined;
  const [dom, rest] = splitDockerDomain(image);
  const colon = rest.indexOf(':');
  const remoteName = colon > -1 ? rest.slice(0, colon) : rest;
  if (remoteName.toLowerCase() !== remoteName) return undefined;
  const m = referenceRe.exec(`${dom}/${rest}`);
  if (!m) return undefined;
  if (m[1]!.length > NAME_TOTAL_LENGTH_MAX) return undefined;
  const d = m[3];
  if (d !== undefined) {
    const [alg, hex] = d.split(':') as [string, string];
    if (DIGEST_HEX_LENGTHS[alg] !== hex.length || !/^[a-f0-9]+$/.test(hex)) return undefined;
  }
  const t = m[2] ?? '';
  return t === '' && d === undefined ? 'latest' : t;
}
