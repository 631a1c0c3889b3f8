/** The operator's Prometheus metrics (one registry per process, served on /metrics). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface OperatorMetrics {
  registry: Registry;
  reconcileTotal: Counter<'controller' | 'result'>;
  reconcileErrors: Counter<'controller'>;
  reconcileDuration: Histogram<'controller'>;
  queueDepth: Gauge<'controller'>;
  kubeRequests: Counter<'verb' | 'resource' | 'code'>;
  serverRequests: Counter<'operation' | 'code'>;
  leader: Gauge;
}

export function createOperatorMetrics(options: { processMetrics?: boolean } = {}): OperatorMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'terdut_operator_reconcile_total',
      help: 'Reconciles by result: success, requeue, conflict (an object changed meanwhile; retried), error.',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'terdut_operator_reconcile_errors_total',
      help: 'Reconciles that ended in an error (retried with back-off).',
      labelNames: ['controller'],
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'terdut_operator_reconcile_duration_seconds',
      help: 'Time one reconcile pass took.',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'terdut_operator_workqueue_depth',
      help: 'Keys waiting in the work queue.',
      labelNames: ['controller'],
      registers: [registry],
    }),
    kubeRequests: new Counter({
      name: 'terdut_operator_kube_requests_total',
      help: 'Requests to the Kubernetes API by verb, resource and status code (0: no answer).',
      labelNames: ['verb', 'resource', 'code'],
      registers: [registry],
    }),
    serverRequests: new Counter({
      name: 'terdut_operator_server_requests_total',
      help: 'Requests to managed terdut-servers by operation and status code (0: no answer).',
      labelNames: ['operation', 'code'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'terdut_operator_leader',
      help: '1 while this replica holds the leader lease.',
      registers: [registry],
    }),
  };
}
