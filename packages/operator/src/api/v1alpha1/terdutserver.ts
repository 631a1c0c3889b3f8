/**
 * TerdutServer (terdut.ryuvia.com/v1alpha1): the schema here is the single
 * source of the CRD's OpenAPI schema (./crd.ts generates
 * deploy/crds/terdut.ryuvia.com_terdutservers.yaml from it) and of the
 * TypeScript types the reconciler reads. Every field carries a description so
 * `kubectl explain terdutserver.spec` documents the resource.
 */
import { Type, type Static } from 'typebox';

export const group = 'terdut.ryuvia.com';
export const version = 'v1alpha1';
export const apiVersion = `${group}/${version}`;
export const kind = 'TerdutServer';
export const plural = 'terdutservers';
export const singular = 'terdutserver';
export const shortNames = ['terdut'];

/** A string restricted to `values`, with the `type` a structural schema needs (TypeBox's Enum omits it). */
function stringEnum<const T extends readonly string[]>(
  values: T,
  options: { description: string; default?: T[number] },
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A Kubernetes resource quantity (`500m`, `1Gi`, or a bare number). */
const quantity = Type.Unsafe<string | number>({
  'x-kubernetes-int-or-string': true,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  pattern:
    '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
});

/** A DNS subdomain (RFC 1123), as Kubernetes object names are: one that is not could never be found or created. */
const dnsSubdomain = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const dnsLabelName = (description: string) =>
  Type.String({ description, minLength: 1, maxLength: 253, pattern: dnsSubdomain });
/**
 * A key a Secret can hold: alphanumerics, `-`, `_`, `.`, but not `.`, `..`
 * or a leading `..`, which the API server refuses in a Secret (a spec naming
 * one would wait for a Secret nobody can make). RE2 has no look-ahead, so: an
 * optional dot, then a character that is not one.
 */
const secretKey = (description: string, options: { default?: string } = {}) =>
  Type.String({
    description,
    minLength: 1,
    maxLength: 253,
    pattern: '^\\.?[-_a-zA-Z0-9][-._a-zA-Z0-9]*$',
    ...options,
  });

export const PostgresqlDatabase = Type.Object(
  {
    clusterName: dnsLabelName(
      'Name of the Zalando `postgresql` (acid.zalan.do) cluster in the same namespace. Its Service is the database host (port 5432).',
    ),
    // Both patterns are the Zalando operator's own (pkg/cluster/cluster.go,
    // userRegexp and databaseNameRegexp, v1.15): it skips a role or database
    // named otherwise, so no credentials Secret would ever appear and the
    // TerdutServer would wait for it with a message blaming spec.users. The
    // database name also goes into DATABASE_URL's path unescaped, which
    // this keeps to characters a URL path takes as they are.
    user: Type.String({
      description:
        'Database role declared in the cluster’s `spec.users`: lower-case letters, digits, `-`, `_` and `.`, as the Zalando operator requires of a role it creates. The operator reads the password from the Secret `{user}.{clusterName}.credentials.postgresql.acid.zalan.do` (underscores in the user become dashes).',
      minLength: 1,
      // PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1).
      maxLength: 63,
      pattern: '^[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*$',
    }),
    databaseName: Type.String({
      description:
        'Database (declared in the cluster’s `spec.databases`) that terdut-server uses: letters, digits and `_`, not starting with a digit, as the Zalando operator requires of a database it creates.',
      minLength: 1,
      maxLength: 63,
      pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$',
    }),
    sslMode: stringEnum(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const, {
      description:
        'libpq `sslmode` for the connection. The Zalando operator serves TLS, so `require` is the default.',
      default: 'require',
    }),
  },
  {
    description:
      'Use a PostgreSQL cluster managed by the Zalando postgres-operator. The operator only reads its credentials Secret; it never owns or changes the database.',
  },
);

export const DatabaseSpec = Type.Object(
  {
    postgresql: Type.Optional(PostgresqlDatabase),
    secretRef: Type.Optional(
      Type.Object(
        {
          name: dnsLabelName('Name of the Secret holding the connection URL.'),
          key: secretKey('Key holding a `postgres://` URL.', { default: 'DATABASE_URL' }),
        },
        {
          description:
            'A Secret key holding a complete `DATABASE_URL` (postgres://user:password@host:port/db).',
        },
      ),
    ),
  },
  {
    description: 'Where terdut-server keeps its data. Set exactly one of `postgresql` or `secretRef`.',
    'x-kubernetes-validations': [
      {
        rule: 'has(self.postgresql) != has(self.secretRef)',
        message: 'set exactly one of spec.database.postgresql or spec.database.secretRef',
      },
    ],
  },
);

export const OidcSpec = Type.Object(
  {
    issuerURL: Type.String({
      description: 'OpenID Provider issuer URL (its discovery document lives below it).',
      pattern: '^https?://',
    }),
    clientID: Type.String({ description: 'OAuth 2.0 client id registered for terdut-server.', minLength: 1 }),
    clientSecretRef: Type.Optional(
      Type.Object(
        {
          name: dnsLabelName('Name of the Secret holding the client secret.'),
          key: secretKey('Key of the client secret.'),
        },
        {
          description:
            'Secret key holding the OAuth 2.0 client secret; mounted into the pod as a file, never copied into its spec.',
        },
      ),
    ),
    allowedGroups: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Only members of these groups may sign in. Empty: every authenticated user.',
      }),
    ),
    adminGroups: Type.Optional(
      Type.Array(Type.String(), { description: 'Members of these groups become terdut admins.' }),
    ),
  },
  {
    description: 'Sign-in through an OpenID Connect provider. Requires `publicURL`.',
    'x-kubernetes-validations': [
      {
        rule: "self.issuerURL.startsWith('https://') || self.issuerURL.matches('^http://(localhost|127[.]0[.]0[.]1|[[]::1[]])([:/]|$)')",
        message:
          'spec.oidc.issuerURL must be an https:// URL (plain http only for a provider on localhost); terdut-server refuses to start otherwise',
      },
    ],
  },
);

export const ParentReference = Type.Object(
  {
    name: dnsLabelName('Name of the Gateway.'),
    namespace: Type.Optional(
      Type.String({
        description: 'Namespace of the Gateway; defaults to the TerdutServer’s namespace.',
        maxLength: 63,
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      }),
    ),
    sectionName: Type.Optional(
      Type.String({ description: 'Listener name on the Gateway.', maxLength: 253, pattern: dnsSubdomain }),
    ),
  },
  { description: 'A Gateway API Gateway the HTTPRoute attaches to.' },
);

export const NetworkingSpec = Type.Object(
  {
    hostname: Type.Optional(
      Type.String({
        description:
          'Public hostname. With `parentRefs`, the operator creates an HTTPRoute for it once the server is bootstrapped.',
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
        maxLength: 253,
      }),
    ),
    parentRefs: Type.Optional(
      Type.Array(ParentReference, {
        description: 'Gateways the HTTPRoute attaches to (Gateway API must be installed).',
        maxItems: 16,
      }),
    ),
    trustedProxies: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        description:
          'With a hostname (an HTTPRoute), the gateway is the proxy in front of the server: the addresses, CIDRs or keywords (loopback, linklocal, uniquelocal) whose X-Forwarded-For/-Proto the server believes, set as TERDUT_TRUSTED_PROXIES. Default: the private ranges 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and uniquelocal (where gateway pods run). An empty list sets nothing.',
        maxItems: 32,
      }),
    ),
  },
  {
    description: 'How terdut-server is reached from outside the cluster.',
    'x-kubernetes-validations': [
      {
        rule: '!has(self.hostname) || (has(self.parentRefs) && size(self.parentRefs) > 0)',
        message:
          'spec.networking.hostname requires spec.networking.parentRefs (the Gateways to attach the route to)',
      },
    ],
  },
);

export const ResourceRequirements = Type.Object(
  {
    requests: Type.Optional(
      Type.Record(Type.String(), quantity, { description: 'Minimum resources (cpu, memory) per replica.' }),
    ),
    limits: Type.Optional(
      Type.Record(Type.String(), quantity, { description: 'Maximum resources (cpu, memory) per replica.' }),
    ),
  },
  { description: 'Compute resources of the terdut-server container.' },
);

export const TerdutServerSpec = Type.Object(
  {
    image: Type.Optional(
      Type.String({
        description: 'terdut-server container image. Defaults to the operator’s --default-image.',
        minLength: 1,
      }),
    ),
    replicas: Type.Integer({
      description: 'Number of terdut-server replicas. 0 stops the server (and pauses its bootstrap).',
      minimum: 0,
      maximum: 100,
      default: 1,
    }),
    resources: Type.Optional(ResourceRequirements),
    database: DatabaseSpec,
    oidc: Type.Optional(OidcSpec),
    networking: Type.Optional(NetworkingSpec),
    timezone: Type.Optional(
      Type.String({
        description:
          'IANA time zone that defines “today” for the on-call schedule and statistics (default UTC).',
      }),
    ),
    publicURL: Type.Optional(
      Type.String({
        description:
          'Public base URL (https://…) of the server; OIDC redirects derive from it. Defaults to https://<hostname> when networking.hostname is set.',
        pattern: '^https?://',
      }),
    ),
  },
  {
    description: 'Desired state of a terdut-server instance.',
    // terdut-server refuses to start otherwise (config.ts): say so at apply time.
    'x-kubernetes-validations': [
      {
        rule: '!has(self.oidc) || has(self.publicURL) || (has(self.networking) && has(self.networking.hostname))',
        message:
          'spec.oidc requires spec.publicURL (or spec.networking.hostname, which makes it https://<hostname>): the OIDC redirect URL is derived from it',
      },
    ],
  },
);

export const conditionTypes = ['DatabaseReady', 'Available', 'Bootstrapped', 'Exposed', 'Ready'] as const;
export type ConditionType = (typeof conditionTypes)[number];

export const Condition = Type.Object(
  {
    type: Type.String({
      description: 'Condition type: DatabaseReady, Available, Bootstrapped, Exposed or Ready.',
      maxLength: 316,
    }),
    status: stringEnum(['True', 'False', 'Unknown'] as const, { description: 'True, False or Unknown.' }),
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'metadata.generation the condition was computed from.', minimum: 0 }),
    ),
    lastTransitionTime: Type.String({
      description: 'When the status last changed.',
      format: 'date-time',
    }),
    reason: Type.String({
      description: 'CamelCase reason for the status.',
      maxLength: 1024,
      minLength: 1,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: Type.String({
      description: 'What happened, and the next step when something is wrong.',
      maxLength: 32768,
    }),
  },
  { description: 'A metav1.Condition.' },
);

export const TerdutServerStatus = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'metadata.generation the operator last reconciled.', minimum: 0 }),
    ),
    conditions: Type.Optional(
      Type.Array(Condition, {
        description: 'DatabaseReady, Available, Bootstrapped, Exposed and Ready (the summary).',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    credentialsSecretRef: Type.Optional(
      Type.Object(
        {
          name: Type.String({ description: 'Secret name in the operator’s namespace.' }),
          key: Type.String({ description: 'Key holding the API key.' }),
        },
        {
          description:
            'The Secret (in the operator’s namespace) holding the operator’s service-account API key for this server. Set once the bootstrap has completed.',
        },
      ),
    ),
    url: Type.Optional(
      Type.String({ description: 'Where the server is reached: the public URL, else its Service URL.' }),
    ),
    replicas: Type.Optional(
      Type.Integer({
        description:
          'Pods the Deployment has (its status.replicas): what the scale subresource reports as the current count.',
        minimum: 0,
      }),
    ),
    selector: Type.Optional(
      Type.String({
        description:
          'Label selector of the server’s pods, for the scale subresource (kubectl scale, HorizontalPodAutoscaler).',
      }),
    ),
  },
  { description: 'Observed state, written by the operator.' },
);

export const TerdutServerSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'terdut.ryuvia.com/v1alpha1' })),
    kind: Type.Optional(Type.String({ description: 'TerdutServer' })),
    // The API server allows nothing but `type: object` here (not even a description).
    metadata: Type.Optional(Type.Unsafe<object>({ type: 'object' })),
    spec: TerdutServerSpec,
    status: Type.Optional(TerdutServerStatus),
  },
  {
    description:
      'A terdut-server (on-call and incident manager) run and bootstrapped by terdut-operator: a Deployment, a Service, a bootstrap-token Secret, optionally an HTTPRoute, and the operator’s own credential for it.',
    // The name becomes the Service's name and a label value: a name either
    // refuses (dots, more than 63 characters) could never run.
    'x-kubernetes-validations': [
      {
        rule: "size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        message:
          'metadata.name must be at most 63 lowercase letters, digits and "-", starting with a letter and ending with a letter or digit (no dots): it names the Service and labels the pods',
      },
    ],
  },
);

export type TerdutServerSpec = Static<typeof TerdutServerSpec>;
export type TerdutServerStatus = Static<typeof TerdutServerStatus>;
export type Condition = Static<typeof Condition>;

/** The object as read from the API server (defaults applied by it). */
export interface TerdutServer {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation: number;
    resourceVersion: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
  };
  spec: TerdutServerSpec;
  status?: TerdutServerStatus;
}
