/**
 * Spec values the CRD schema cannot judge (CEL knows no time zones, and
 * parsing URLs and CIDRs is beyond a pattern) but terdut-server refuses at
 * start-up (packages/server/src/config.ts, the same rules): a Deployment
 * made from them would only crash-loop, with status saying "check its
 * pods". The workload step says which field is wrong instead.
 */
import { isIP } from 'node:net';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';

/** What is wrong with the spec's server settings, or undefined when terdut-server takes them. */
export function refusedServerSettings(spec: TerdutServer['spec']): string | undefined {
  if (spec.timezone !== undefined && !isTimeZone(spec.timezone)) {
    return `spec.timezone "${spec.timezone}" is not an IANA time zone; use a name like Europe/Berlin or UTC`;
  }
  if (spec.publicURL !== undefined && !isHttpUrl(spec.publicURL)) {
    return `spec.publicURL "${spec.publicURL}" is not an absolute http(s) URL; use e.g. https://terdut.example.com`;
  }
  const proxy = spec.networking?.trustedProxies?.find((entry) => !isProxyEntry(entry));
  if (proxy !== undefined) {
    return `spec.networking.trustedProxies entry "${proxy}" is not an address or CIDR; use e.g. 10.0.0.0/8, 127.0.0.1 or loopback`;
  }
  return undefined;
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function isHttpUrl(text: string): boolean {
  return /^https?:\/\/[^/]+/.test(text) && URL.canParse(text);
}

function isProxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const maxBits = isIP(address) === 6 ? 128 : 32;
  const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
  return isIP(address) !== 0 && bitsOk && rest.length === 0;
}
