/**
 * The generated TerdutServer CRD on the real kube-apiserver: it is accepted
 * as a structural schema, applies its defaults, and rejects invalid specs
 * with messages a person can act on.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { installTerdutCrd } from './support/operator.ts';

let kube: KubeForTests;
let namespace: string;

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  namespace = await uniqueNamespace(kube.admin, 'crd');
});
after(async () => kube?.stop());

const create = (spec: unknown, name = `ts-${Math.random().toString(16).slice(2, 8)}`) =>
  kubeRequest(kube.admin, 'POST', `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers`, {
    body: { apiVersion: 'terdut.ryuvia.com/v1alpha1', kind: 'TerdutServer', metadata: { name }, spec },
  });

const zalando = { postgresql: { clusterName: 'pg', user: 'terdut', databaseName: 'terdut' } };

test('the committed CRD file is what the API server accepts and serves', async () => {
  const served = await kubeRequestOk<any>(
    kube.admin,
    'GET',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/terdutservers.terdut.ryuvia.com',
  );
  const established = served.status.conditions.find((c: any) => c.type === 'Established');
  assert.equal(established?.status, 'True');
  const nonStructural = served.status.conditions.find((c: any) => c.type === 'NonStructuralSchema');
  assert.equal(nonStructural, undefined, 'the schema is structural');
});

test('a minimal TerdutServer gets its defaults from the API server', async () => {
  const res = await create({ database: zalando });
  assert.equal(res.status, 201, res.text);
  const object = res.json<any>();
  assert.equal(object.spec.replicas, 1);
  assert.equal(object.spec.database.postgresql.sslMode, 'require');
  const withSecret = await create({ database: { secretRef: { name: 'db' } } });
  assert.equal(withSecret.status, 201, withSecret.text);
  assert.equal(withSecret.json<any>().spec.database.secretRef.key, 'DATABASE_URL');
});

test('both database sources at once are refused, naming the rule', async () => {
  const res = await create({
    database: { ...zalando, secretRef: { name: 'db', key: 'url' } },
  });
  assert.equal(res.status, 422);
  assert.match(
    res.json<any>().message,
    /set exactly one of spec\.database\.postgresql or spec\.database\.secretRef/,
  );
});

test('no database source at all is refused', async () => {
  const res = await create({ database: {} });
  assert.equal(res.status, 422);
  assert.match(
    res.json<any>().message,
    /set exactly one of spec\.database\.postgresql or spec\.database\.secretRef/,
  );
});

test('a hostname without parentRefs is refused, saying what is missing', async () => {
  const res = await create({ database: zalando, networking: { hostname: 'terdut.example.com' } });
  assert.equal(res.status, 422);
  assert.match(res.json<any>().message, /hostname requires spec\.networking\.parentRefs/);
});

test('negative replicas are refused', async () => {
  const res = await create({ database: zalando, replicas: -1 });
  assert.equal(res.status, 422);
  assert.match(
    res.json<any>().message,
    /spec\.replicas: Invalid value: -1: spec\.replicas in body should be greater than or equal to 0/,
  );
});

test('kubectl get shows Ready, Bootstrapped, URL and Age columns', async () => {
  const crd = await kubeRequestOk<any>(
    kube.admin,
    'GET',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/terdutservers.terdut.ryuvia.com',
  );
  assert.deepEqual(
    crd.spec.versions[0].additionalPrinterColumns.map((c: any) => c.name),
    ['Ready', 'Bootstrapped', 'URL', 'Age'],
  );
});

test('a name that cannot name the Service or label the pods (dots, more than 63 characters) is refused, saying why', async () => {
  for (const name of ['my.server', 'a'.repeat(64), 'ends-with-dash-']) {
    const res = await create({ database: zalando }, name);
    assert.equal(res.status, 422, `${name}: ${res.text}`);
    assert.match(res.json<any>().message, /metadata\.name must be at most 63 lowercase letters.*no dots/);
  }
  const fine = await create({ database: zalando }, `on-call-${'x'.repeat(55)}`);
  assert.equal(fine.status, 201, fine.text);
});

test('OIDC settings terdut-server would refuse to start with are refused at apply time, saying why', async () => {
  const oidc = { issuerURL: 'https://sso.example.com/realms/x', clientID: 'terdut' };
  const noPublicUrl = await create({ database: zalando, oidc });
  assert.equal(noPublicUrl.status, 422, noPublicUrl.text);
  assert.match(noPublicUrl.json<any>().message, /spec\.oidc requires spec\.publicURL/);
  const plainHttp = await create({
    database: zalando,
    publicURL: 'https://oncall.example.com',
    oidc: { ...oidc, issuerURL: 'http://sso.example.com/realms/x' },
  });
  assert.equal(plainHttp.status, 422, plainHttp.text);
  assert.match(plainHttp.json<any>().message, /spec\.oidc\.issuerURL must be an https:\/\/ URL/);

  for (const spec of [
    { database: zalando, publicURL: 'https://oncall.example.com', oidc },
    {
      database: zalando,
      networking: { hostname: 'oncall.example.com', parentRefs: [{ name: 'public' }] },
      oidc,
    },
    {
      database: zalando,
      publicURL: 'http://localhost:8080',
      oidc: { ...oidc, issuerURL: 'http://127.0.0.1:5556/dex' },
    },
  ]) {
    const res = await create(spec);
    assert.equal(res.status, 201, `${JSON.stringify(spec)}: ${res.text}`);
  }
});

test('a Zalando role or database name the Zalando operator would never create is refused naming the field (it would wait for a Secret that never comes)', async () => {
  const postgresql = (fields: Record<string, string>) => ({
    database: { postgresql: { clusterName: 'pg', user: 'terdut', databaseName: 'terdut', ...fields } },
  });
  const cases: [unknown, RegExp][] = [
    [postgresql({ user: 'Terdut' }), /spec\.database\.postgresql\.user/],
    [postgresql({ user: 'app user' }), /spec\.database\.postgresql\.user/],
    [postgresql({ user: 'terdut_' }), /spec\.database\.postgresql\.user/],
    [postgresql({ user: 'x'.repeat(64) }), /spec\.database\.postgresql\.user/],
    [postgresql({ databaseName: 'on-call' }), /spec\.database\.postgresql\.databaseName/],
    [postgresql({ databaseName: 'terdut?sslmode=disable' }), /spec\.database\.postgresql\.databaseName/],
    [postgresql({ databaseName: '1terdut' }), /spec\.database\.postgresql\.databaseName/],
  ];
  for (const [spec, field] of cases) {
    const res = await create(spec);
    assert.equal(res.status, 422, `${JSON.stringify(spec)}: ${res.text}`);
    assert.match(res.json<any>().message, field);
  }
  for (const fields of [
    { user: 'terdut_app', databaseName: 'Terdut_1' },
    { user: 'app.terdut-2', databaseName: '_terdut' },
  ]) {
    const fine = await create(postgresql(fields));
    assert.equal(fine.status, 201, fine.text);
  }
});

test('Secret names and keys no Secret can have, and Gateway references no Gateway can have, are refused naming the field', async () => {
  const cases: [unknown, RegExp][] = [
    [{ database: { secretRef: { name: 'Terdut_DB' } } }, /spec\.database\.secretRef\.name/],
    [{ database: { secretRef: { name: 'db', key: 'url/x' } } }, /spec\.database\.secretRef\.key/],
    // No Secret can hold these keys (the API server refuses '.', '..' and a leading '..').
    [{ database: { secretRef: { name: 'db', key: '..' } } }, /spec\.database\.secretRef\.key/],
    [{ database: { secretRef: { name: 'db', key: '..url' } } }, /spec\.database\.secretRef\.key/],
    [
      {
        database: zalando,
        publicURL: 'https://oncall.example.com',
        oidc: {
          issuerURL: 'https://sso.example.com',
          clientID: 'terdut',
          clientSecretRef: { name: 'oidc', key: '.' },
        },
      },
      /spec\.oidc\.clientSecretRef\.key/,
    ],
    [
      {
        database: zalando,
        publicURL: 'https://oncall.example.com',
        oidc: {
          issuerURL: 'https://sso.example.com',
          clientID: 'terdut',
          clientSecretRef: { name: 'oidc', key: 'client secret' },
        },
      },
      /spec\.oidc\.clientSecretRef\.key/,
    ],
    [
      {
        database: zalando,
        networking: { hostname: 'x.example.com', parentRefs: [{ name: 'public', namespace: 'Gateways_NS' }] },
      },
      /spec\.networking\.parentRefs\[0\]\.namespace/,
    ],
    [
      {
        database: zalando,
        networking: {
          hostname: 'x.example.com',
          parentRefs: [{ name: 'public', sectionName: 'https main' }],
        },
      },
      /spec\.networking\.parentRefs\[0\]\.sectionName/,
    ],
  ];
  for (const [spec, field] of cases) {
    const res = await create(spec);
    assert.equal(res.status, 422, `${JSON.stringify(spec)}: ${res.text}`);
    assert.match(res.json<any>().message, field);
  }
  for (const key of ['DATABASE_URL.v2', '.url', 'a..b']) {
    const fine = await create({ database: { secretRef: { name: 'terdut.db', key } } });
    assert.equal(fine.status, 201, fine.text);
  }
});
