/**
 * The operator's least-privilege RBAC, generated into deploy/rbac/. Each rule
 * names the code that needs it; a verb not listed here is one the operator
 * never uses. Change a call, change this list, run `npm run generate`.
 */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export const operatorName = 'terdut-operator';

/** Cluster-wide: the operator watches TerdutServers (and what they own) in every namespace by default. */
export const clusterRules: PolicyRule[] = [
  // Informer (list, watch); finalizer add/remove (patch).
  {
    apiGroups: ['terdut.ryuvia.com'],
    resources: ['terdutservers'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  // status.ts writes conditions through the status subresource.
  { apiGroups: ['terdut.ryuvia.com'], resources: ['terdutservers/status'], verbs: ['get', 'patch'] },
  // Owner references with blockOwnerDeletion need update on the owner's finalizers
  // (OwnerReferencesPermissionEnforcement admission).
  { apiGroups: ['terdut.ryuvia.com'], resources: ['terdutservers/finalizers'], verbs: ['update'] },
  // workload.ts: server-side apply of the Deployment; informer for readiness.
  // An apply PATCH that finds no object creates it, and the API server
  // authorises that as `create`, so apply needs both verbs.
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
  // workload.ts: server-side apply of the Service (create + patch, as above).
  { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
  // token-secret.ts creates the bootstrap-token Secret, rotates it (update)
  // and clears the rotation mark (patch); database.ts reads database Secrets;
  // a metadata-only informer wakes resources when a Secret they wait for
  // appears, and a label-filtered one caches the operator's own Secrets.
  // Deleting is in the operator's namespace only (ownSecretsRules).
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
  },
  // Events for what a person should see (BootstrapSucceeded, ...).
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
  // route.ts: server-side apply and deletion of the HTTPRoute; informer for its status.
  {
    apiGroups: ['gateway.networking.k8s.io'],
    resources: ['httproutes'],
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
  },
];

/** In the operator's own namespace only: leader election. */
export const namespaceRules: PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];

/**
 * In the operator's own namespace only, whether or not it elects a leader:
 * finalizer.ts and checkpoint.ts delete the Secrets it keeps there
 * (credentials, checkpoint). A bootstrap-token Secret beside a TerdutServer
 * goes with it (owner reference), so no Secret elsewhere is ever deleted,
 * and a stolen operator token cannot delete one.
 */
export const ownSecretsRules: PolicyRule[] = [{ apiGroups: [''], resources: ['secrets'], verbs: ['delete'] }];

/**
 * For people, not the operator: who may read and change TerdutServers. The
 * three ClusterRoles carry the `aggregate-to-view`/`-edit`/`-admin` labels,
 * so kube-controller-manager's ClusterRole aggregation folds their rules into
 * the built-in `view`, `edit` and `admin` roles (as cert-manager and
 * prometheus-operator ship theirs): whoever may edit Deployments in a
 * namespace may then edit the TerdutServers there, with no binding of ours.
 * Status is the operator's to write; people only read it (the `edit` role
 * likewise reads `deployments/status` and never writes it). Scale is spec
 * (`kubectl scale`), so it is writable where the spec is.
 */
const readVerbs = ['get', 'list', 'watch'];
const writeVerbs = [...readVerbs, 'create', 'update', 'patch', 'delete', 'deletecollection'];
const viewRules: PolicyRule[] = [
  {
    apiGroups: ['terdut.ryuvia.com'],
    resources: ['terdutservers', 'terdutservers/status', 'terdutservers/scale'],
    verbs: readVerbs,
  },
];
const editRules: PolicyRule[] = [
  {
    apiGroups: ['terdut.ryuvia.com'],
    resources: ['terdutservers', 'terdutservers/scale'],
    verbs: writeVerbs,
  },
  { apiGroups: ['terdut.ryuvia.com'], resources: ['terdutservers/status'], verbs: readVerbs },
];

/** The built-in role each aggregated ClusterRole joins, with its rules. */
export const userRoleRules: Record<'view' | 'edit' | 'admin', PolicyRule[]> = {
  view: viewRules,
  edit: editRules,
  // `admin` aggregates `edit` already; its own label keeps admin complete on
  // a cluster whose `edit` role was customised.
  admin: editRules,
};

/** `terdutservers-view`, `-edit`, `-admin`: aggregated into the built-in roles (see `userRoleRules`). */
export function userRoleObjects(): Record<string, unknown>[] {
  return Object.entries(userRoleRules).map(([role, rules]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: `terdutservers-${role}`,
      labels: {
        'app.kubernetes.io/name': operatorName,
        [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true',
      },
    },
    rules,
  }));
}

/** ServiceAccount, ClusterRole(+Binding) and the two Roles(+Bindings) in `namespace`. */
export function rbacObjects(namespace: string): Record<string, unknown>[] {
  const labels = { 'app.kubernetes.io/name': operatorName };
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: operatorName, namespace, labels },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: operatorName, labels },
      rules: clusterRules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: operatorName, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: operatorName },
      subjects: [{ kind: 'ServiceAccount', name: operatorName, namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `${operatorName}-own-secrets`, namespace, labels },
      rules: ownSecretsRules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${operatorName}-own-secrets`, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${operatorName}-own-secrets` },
      subjects: [{ kind: 'ServiceAccount', name: operatorName, namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `${operatorName}-leader-election`, namespace, labels },
      rules: namespaceRules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${operatorName}-leader-election`, namespace, labels },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: `${operatorName}-leader-election`,
      },
      subjects: [{ kind: 'ServiceAccount', name: operatorName, namespace }],
    },
  ];
}
