/**
 * Where the operator reaches a terdut-server. In a cluster that is the
 * Service's DNS name; outside one (running the operator against a remote
 * cluster, or in tests where the kubelet stand-in runs the server on
 * loopback) a file of overrides maps `namespace/service` to a URL. The file
 * is re-read on each lookup so it can be written after the operator starts.
 */
import { readFileSync } from 'node:fs';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { serviceUrl, workloadName } from './names.ts';

export type ServerUrlResolver = (namespace: string, service: string, serviceUrl: string) => string;

export const serviceDnsResolver: ServerUrlResolver = (_namespace, _service, serviceUrl) => serviceUrl;

/** Lines `namespace/service=http://host:port`; `#` comments and blank lines are ignored. */
export function overridesFileResolver(path: string): ServerUrlResolver {
  return (namespace, service, serviceUrl) => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return serviceUrl;
    }
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const at = trimmed.indexOf('=');
      if (at > 0 && trimmed.slice(0, at) === `${namespace}/${service}`) return trimmed.slice(at + 1);
    }
    return serviceUrl;
  };
}

/** The base URL of `server`'s terdut-server, as this operator reaches it. */
export function serverBaseUrl(deps: { resolveServerUrl: ServerUrlResolver }, server: TerdutServer): string {
  return deps.resolveServerUrl(server.metadata.namespace, workloadName(server), serviceUrl(server));
}
