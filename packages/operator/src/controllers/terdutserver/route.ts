/**
 * Step 6: the public HTTPRoute (Gateway API). Created only after the server
 * is bootstrapped, so no outside user can reach a server nobody has claimed
 * (bootstrap-protocol.md, operator rule 4), and only when the API server
 * serves HTTPRoutes. `Exposed` mirrors what the Gateways say in the route's
 * status.
 */
import { isInvalid, resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { KubeObject } from '../../runtime/kube-client.ts';
import type { Pass, ReconcileDeps, StepResult } from './context.ts';
import { commonLabels, fieldManager, ownerReference, serverPort, serviceUrl, workloadName } from './names.ts';

interface HttpRoute extends KubeObject {
  status?: {
    parents?: {
      parentRef: { name: string; namespace?: string };
      conditions?: { type: string; status: string; reason?: string; message?: string }[];
    }[];
  };
}

export function desiredHttpRoute(server: TerdutServer): Record<string, unknown> {
  const networking = server.spec.networking!;
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: workloadName(server),
      namespace: server.metadata.namespace,
      labels: commonLabels(server),
      ownerReferences: [ownerReference(server)],
    },
    spec: {
      parentRefs: (networking.parentRefs ?? []).map((ref) => ({
        group: 'gateway.networking.k8s.io',
        kind: 'Gateway',
        name: ref.name,
        ...(ref.namespace ? { namespace: ref.namespace } : {}),
        ...(ref.sectionName ? { sectionName: ref.sectionName } : {}),
      })),
      hostnames: [networking.hostname!],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [
            { group: '', kind: 'Service', name: workloadName(server), port: serverPort, weight: 1 },
          ],
        },
      ],
    },
  };
}

export async function reconcileRoute(
  deps: Pick<ReconcileDeps, 'kube' | 'failpoint' | 'gatewayApiInstalled' | 'events'>,
  pass: Pass,
): Promise<StepResult> {
  const { server, conditions } = pass;
  const hostname = server.spec.networking?.hostname;
  if (!hostname) {
    // The hostname was removed: the route made for it must go too, or the
    // server stays public. Only a pass that may have made one asks (a
    // settled NotRequested server sends nothing), and only a route this
    // TerdutServer owns goes (a person's own route of that name stays).
    if (conditions.get('Exposed')?.reason !== 'NotRequested') {
      const path = resourcePath(resources.httproutes, server.metadata.namespace, workloadName(server));
      const route = await deps.kube.get<HttpRoute>(path);
      if (route?.metadata.ownerReferences?.some((ref) => ref.uid === server.metadata.uid))
        await deps.kube.delete(path);
    }
    // No longer https://<the old hostname>.
    pass.status.url = serviceUrl(server);
    conditions.set(
      'Exposed',
      'False',
      'NotRequested',
      `spec.networking.hostname is not set; the server is reachable inside the cluster at ${pass.status.url ?? 'its Service'}`,
    );
    return undefined;
  }
  if (!conditions.isTrue('Bootstrapped')) {
    conditions.set(
      'Exposed',
      'False',
      'WaitingForBootstrap',
      'the HTTPRoute is created once the server is bootstrapped, so nobody outside can reach an unclaimed server',
    );
    return undefined;
  }
  if (!(await deps.gatewayApiInstalled())) {
    conditions.set(
      'Exposed',
      'False',
      'GatewayAPINotInstalled',
      `the cluster does not serve gateway.networking.k8s.io/v1 HTTPRoutes; install the Gateway API CRDs to expose https://${hostname}`,
    );
    return undefined;
  }
  let route: HttpRoute;
  try {
    route = await deps.kube.apply<HttpRoute>(
      resourcePath(resources.httproutes, server.metadata.namespace, workloadName(server)),
      desiredHttpRoute(server),
      fieldManager,
    );
  } catch (error) {
    // spec.networking the CRD accepts but the HTTPRoute CRD refuses (a
    // parentRefs namespace or sectionName that is no DNS name): a person must
    // change the TerdutServer, and its update wakes it.
    if (!isInvalid(error)) throw error;
    const refusal = (error as Error).message.replace(/^[A-Z]+ \S+: /, '');
    const message = `the API server refused HTTPRoute ${server.metadata.namespace}/${workloadName(server)} made from spec.networking: ${refusal}; correct spec.networking, the operator retries when it changes`;
    conditions.set('Exposed', 'False', 'RouteInvalid', message);
    if (conditions.changed('Exposed')) await deps.events.record(server, 'Warning', 'RouteInvalid', message);
    return undefined;
  }
  deps.failpoint('route');
  const parents = route.status?.parents ?? [];
  const accepted = parents.filter((parent) =>
    parent.conditions?.some((c) => c.type === 'Accepted' && c.status === 'True'),
  );
  const gateways = (server.spec.networking?.parentRefs ?? []).map((ref) => ref.name).join(', ');
  if (accepted.length > 0) {
    conditions.set(
      'Exposed',
      'True',
      'RouteAccepted',
      `https://${hostname} is routed by Gateway ${accepted.map((p) => p.parentRef.name).join(', ')}`,
    );
    pass.status.url = server.spec.publicURL ?? `https://${hostname}`;
  } else {
    const refusal = parents
      .flatMap((parent) => parent.conditions ?? [])
      .find((c) => c.type === 'Accepted' && c.status === 'False');
    conditions.set(
      'Exposed',
      'False',
      'RouteNotAccepted',
      refusal
        ? `Gateway ${gateways} refused HTTPRoute ${server.metadata.namespace}/${workloadName(server)}: ${refusal.reason ?? ''} ${refusal.message ?? ''}`.trim()
        : `HTTPRoute ${server.metadata.namespace}/${workloadName(server)} is not accepted by Gateway ${gateways} yet; check that the Gateway exists and its listeners allow routes from namespace ${server.metadata.namespace}`,
    );
  }
  return undefined;
}
