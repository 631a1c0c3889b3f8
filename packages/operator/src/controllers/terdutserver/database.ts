/**
 * Step 3: where the server's database credentials come from. The operator
 * only checks that the Secret exists and references it from the pod
 * (secretKeyRef); it never copies credentials into the pod spec and never
 * touches the database itself. A missing Secret is a normal waiting state:
 * DatabaseReady=False, and the Secret watch wakes the resource when it
 * appears (no polling).
 */
import { resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { stop, type EnvVar, type Pass, type ReconcileDeps, type Secret, type StepResult } from './context.ts';

/** The Zalando postgres-operator's credentials Secret name (underscores in the role become dashes). */
export function zalandoSecretName(user: string, clusterName: string): string {
  return `${user.replace(/_/g, '-')}.${clusterName}.credentials.postgresql.acid.zalan.do`;
}

/** The Secret a TerdutServer's database needs: name and the keys that must be in it. */
export function databaseSecretOf(server: TerdutServer): { name: string; keys: string[] } {
  const { postgresql, secretRef } = server.spec.database;
  if (postgresql)
    return {
      name: zalandoSecretName(postgresql.user, postgresql.clusterName),
      keys: ['username', 'password'],
    };
  if (secretRef) return { name: secretRef.name, keys: [secretRef.key ?? 'DATABASE_URL'] };
  // The CRD's CEL rule makes this unreachable for objects the API server accepted.
  throw new Error('spec.database has neither postgresql nor secretRef');
}

function databaseEnv(server: TerdutServer, secretName: string): EnvVar[] {
  const { postgresql, secretRef } = server.spec.database;
  if (postgresql) {
    const host = `${postgresql.clusterName}.${server.metadata.namespace}.svc`;
    return [
      { name: 'TERDUT_DB_USER', valueFrom: { secretKeyRef: { name: secretName, key: 'username' } } },
      { name: 'TERDUT_DB_PASSWORD', valueFrom: { secretKeyRef: { name: secretName, key: 'password' } } },
      // Kubernetes expands $(VAR) from the variables above, so the password
      // stays in the Secret. Zalando generates alphanumeric passwords, which
      // need no URL escaping.
      {
        name: 'DATABASE_URL',
        value: `postgres://$(TERDUT_DB_USER):$(TERDUT_DB_PASSWORD)@${host}:5432/${postgresql.databaseName}?sslmode=${postgresql.sslMode ?? 'require'}`,
      },
    ];
  }
  return [
    {
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: secretName, key: secretRef?.key ?? 'DATABASE_URL' } },
    },
  ];
}

export async function reconcileDatabase(
  deps: Pick<ReconcileDeps, 'kube' | 'events'>,
  pass: Pass,
): Promise<StepResult> {
  const { server, conditions } = pass;
  const { name, keys } = databaseSecretOf(server);
  const namespace = server.metadata.namespace;
  const secret = await deps.kube.get<Secret>(resourcePath(resources.secrets, namespace, name));
  const missingKeys = keys.filter((key) => !secret?.data?.[key]);
  if (!secret || missingKeys.length > 0) {
    const postgresql = server.spec.database.postgresql;
    const what = !secret
      ? `Secret ${namespace}/${name} does not exist`
      : `Secret ${namespace}/${name} has no key ${missingKeys.join(', ')}`;
    const next = postgresql
      ? `the Zalando postgres-operator creates it for user "${postgresql.user}" of postgresql/${postgresql.clusterName}; check that the cluster exists in ${namespace} and lists that user in spec.users`
      : `create it with a postgres:// URL under key ${keys[0]}`;
    conditions.set(
      'DatabaseReady',
      'False',
      'DatabaseSecretMissing',
      `${what}; ${next}. The operator continues when it appears.`,
    );
    if (conditions.changed('DatabaseReady'))
      await deps.events.record(server, 'Warning', 'DatabaseMissing', `${what}; ${next}`);
    return stop();
  }
  conditions.set(
    'DatabaseReady',
    'True',
    'SecretFound',
    server.spec.database.postgresql
      ? `using postgresql/${server.spec.database.postgresql.clusterName} with credentials from Secret ${name}`
      : `using DATABASE_URL from Secret ${name}`,
  );
  pass.databaseEnv = databaseEnv(server, name);
  return undefined;
}
