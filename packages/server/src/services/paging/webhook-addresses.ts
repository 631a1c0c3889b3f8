/**
 * Where an outgoing webhook may not go. Members add their own webhooks and
 * read what the receiver answered (POST …/test, the timeline's
 * notification_failed), so a webhook aimed at the server's own network is a
 * way to ask it questions. Link-local addresses are where cloud metadata
 * services answer (169.254.169.254 hands out the machine's credentials on
 * AWS, GCP, Azure, OpenStack), and no paging receiver lives there, so they
 * are refused unless TERDUT_WEBHOOK_ALLOW_LINK_LOCAL=true (a receiver on the
 * host of a rootless container can sit there); private and loopback
 * addresses stay allowed, since receivers inside the cluster or beside the
 * server are common.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const REFUSED = new BlockList();
REFUSED.addSubnet('169.254.0.0', 16, 'ipv4'); // RFC 3927 link-local; IPv4-mapped IPv6 spellings match too
REFUSED.addSubnet('fe80::', 10, 'ipv6'); // RFC 4291 link-local
REFUSED.addAddress('fd00:ec2::254', 'ipv6'); // AWS's metadata service over IPv6
REFUSED.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud's metadata service

/** True for an address (v4 or v6, no brackets) that webhooks are never sent to. */
export function isRefusedWebhookAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && REFUSED.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The literal IP address of a URL's host, without brackets; undefined for a name. */
export function literalAddressOf(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? undefined : host;
}

/**
 * Why a webhook URL may not be called now, or undefined when it may: its
 * host is, or resolves to, a refused address. A name that does not resolve
 * is left for the request itself to report. The request resolves the name
 * again, so a DNS server that answers differently within milliseconds could
 * slip past; the addresses that matter (metadata services) are reached by
 * literal IPs and fixed names, which this catches.
 */
export async function refusedWebhookDestination(target: string): Promise<string | undefined> {
  const url = new URL(target);
  const literal = literalAddressOf(url);
  let addresses: string[];
  if (literal !== undefined) addresses = [literal];
  else {
    try {
      addresses = (await lookup(url.hostname, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      return undefined;
    }
  }
  const refused = addresses.find(isRefusedWebhookAddress);
  if (refused === undefined) return undefined;
  return (
    `webhook at ${url.origin} refused: ${refused} is a link-local or cloud metadata address, where terdut ` +
    'sends no webhooks (an admin may allow them with TERDUT_WEBHOOK_ALLOW_LINK_LOCAL=true)'
  );
}
