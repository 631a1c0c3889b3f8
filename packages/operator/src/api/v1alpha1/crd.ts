/**
 * The TerdutServer CustomResourceDefinition, built from ./terdutserver.ts.
 * `npm run generate` writes it to deploy/crds/; `npm run check:generated`
 * fails when the committed file differs.
 */
import { group, kind, plural, shortNames, singular, TerdutServerSchema, version } from './terdutserver.ts';

export const crdName = `${plural}.${group}`;

type JsonSchema = { [key: string]: unknown };

/**
 * Turns TypeBox's JSON Schema into a Kubernetes structural schema: maps
 * become `additionalProperties` (structural schemas forbid
 * `patternProperties`), and only plain JSON survives (TypeBox keeps its own
 * markers in symbol keys, which JSON drops).
 */
export function toStructural(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toStructural);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = JSON.parse(JSON.stringify(schema)) as JsonSchema;
  const result: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'patternProperties') {
      const entries = Object.values(value as JsonSchema);
      result.additionalProperties = toStructural(entries[0]);
    } else if (key === 'properties') {
      result.properties = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, property]) => [name, toStructural(property)]),
      );
    } else if (key === 'items' || key === 'additionalProperties') {
      result[key] = toStructural(value);
    } else if (key === 'anyOf') {
      result[key] = (value as unknown[]).map(toStructural);
    } else {
      result[key] = value;
    }
  }
  return result;
}

const condition = (type: string): string => `.status.conditions[?(@.type=="${type}")].status`;

/** The CRD object (apiextensions.k8s.io/v1). */
export function terdutServerCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: crdName,
      annotations: {
        'terdut.ryuvia.com/generated-by': 'npm run generate (packages/operator/src/api/v1alpha1/crd.ts)',
      },
    },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular, listKind: `${kind}List`, shortNames },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: {
            status: {},
            // `kubectl scale` and a HorizontalPodAutoscaler set spec.replicas; the operator carries it
            // to the Deployment and reports its pods back in status.replicas and status.selector.
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.status.selector',
            },
          },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: condition('Ready') },
            { name: 'Bootstrapped', type: 'string', jsonPath: condition('Bootstrapped') },
            { name: 'URL', type: 'string', jsonPath: '.status.url' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema: toStructural(TerdutServerSchema) },
        },
      ],
    },
  };
}
