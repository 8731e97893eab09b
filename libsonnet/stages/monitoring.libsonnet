// 05-monitoring: Prometheus Operator objects (monitoring.coreos.com/v1),
// applied right after base so the training alerts watch training.
// Triton exposes Prometheus metrics itself (port "metrics"): a ServiceMonitor
// scrapes it. NeMo 1 training has no metrics endpoint; its pods are watched
// through the GPU Operator's DCGM exporter, whose series carry the namespace
// and pod of each GPU, in PrometheusRule alerts with the seeds' thresholds
// (GPU utilisation > 80 %, GPU memory < 95 %, throughput that stalls).
local k8s = import 'nemoc/k8s.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local serve = import 'nemoc/stages/serve.libsonnet';
local chain = import 'nemoc/stages/chain.libsonnet';
local train = import 'nemoc/stages/train.libsonnet';

{
  dir: order.dir.monitoring,
  component: 'monitoring',

  name(ctx):: k8s.boundedName(ctx.project + '-' + ctx.target.name, 63),

  serviceMonitor(ctx):: {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: k8s.metadata(ctx, serve.name(ctx), $.component),
    spec: {
      selector: { matchLabels: serve.selector(ctx) },
      namespaceSelector: { matchNames: [ctx.namespace] },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s' }],
    },
  },

  // DCGM series of the training pods of every training stage (all ranks
  // share the workload's name prefix).
  local trainingPods(ctx) =
    local names = [train.jobName(chain.at(ctx, k)) for k in chain.present(ctx)];
    'namespace="' + ctx.namespace + '",pod=~"' + (if std.primitiveEquals(std.length(names), 1) then names[0] else '(' + std.join('|', names) + ')') + '-.*"',

  trainingRules(ctx, t)::
    // Bound once: the name hashes the whole training workload.
    local pods = trainingPods(ctx);
    [
      {
        alert: 'NemoTrainingGpuUtilizationLow',
        expr: 'avg by (pod) (DCGM_FI_DEV_GPU_UTIL{' + pods + '}) < ' + k8s.decimal(t.gpuUtilizationPercent),
        'for': '15m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'NeMo training pod {{ $labels.pod }} keeps its GPUs below ' + k8s.decimal(t.gpuUtilizationPercent) + ' % busy',
          description: 'Input pipeline, communication or a straggler rank is starving the GPUs.',
        },
      },
      {
        alert: 'NemoTrainingGpuMemoryHigh',
        expr: 'max by (pod) (DCGM_FI_DEV_FB_USED{' + pods + '} / (DCGM_FI_DEV_FB_USED{'
              + pods + '} + DCGM_FI_DEV_FB_FREE{' + pods + '})) * 100 > ' + k8s.decimal(t.gpuMemoryPercent),
        'for': '10m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'NeMo training pod {{ $labels.pod }} uses more than ' + k8s.decimal(t.gpuMemoryPercent) + ' % of GPU memory',
          description: 'Close to out-of-memory: lower the micro batch or raise parallelism.',
        },
      },
      {
        // Throughput that stalls shows as GPUs that stop working while the pods still run.
        alert: 'NemoTrainingStalled',
        expr: 'max by (pod) (DCGM_FI_DEV_GPU_UTIL{' + pods + '}) == 0',
        'for': t.stalledAfter,
        labels: { severity: 'critical' },
        annotations: {
          summary: 'NeMo training pod {{ $labels.pod }} has done no GPU work for ' + t.stalledAfter,
          description: 'A hung collective (NCCL), a dead rank or a stuck data loader; check the pod logs.',
        },
      },
    ],

  servingRules(ctx, t):: [
    {
      alert: 'TritonInferenceFailures',
      expr: 'sum(rate(nv_inference_request_failure{namespace="' + ctx.namespace + '",model="' + serve.modelName(ctx) + '"}[5m])) > 0',
      'for': '5m',
      labels: { severity: 'warning' },
      annotations: { summary: 'Triton model ' + serve.modelName(ctx) + ' is failing requests' },
    },
    {
      alert: 'TritonGpuUtilizationSaturated',
      expr: 'avg(nv_gpu_utilization{namespace="' + ctx.namespace + '",service="' + serve.name(ctx) + '"}) * 100 > 95',
      'for': '15m',
      labels: { severity: 'info' },
      annotations: { summary: 'Triton GPUs are saturated: add replicas or raise maxReplicas' },
    },
  ],

  prometheusRule(ctx)::
    local t = ctx.spec.monitoring.thresholds;
    local stages = ctx.spec.stages;
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: k8s.metadata(ctx, $.name(ctx), $.component),
      spec: {
        groups: (if std.objectHasEx(stages, 'train', false) then [{ name: 'nemo-training', rules: $.trainingRules(ctx, t) }] else [])
                + (if std.objectHasEx(stages, 'serve', false) then [{ name: 'triton-serving', rules: $.servingRules(ctx, t) }] else []),
      },
    },

  files(ctx)::
    local monitoring = ctx.spec.monitoring;
    std.foldl(function(acc, o) acc + k8s.file($.dir, o),
              (if monitoring.serviceMonitor then [$.serviceMonitor(ctx)] else [])
              + (if monitoring.alerts then [$.prometheusRule(ctx)] else []),
              {}),

  summary(ctx)::
    local monitoring = ctx.spec.monitoring;
    std.join('; ', (if monitoring.serviceMonitor then ["ServiceMonitor on Triton's metrics port"] else [])
                   + (if monitoring.alerts then ['PrometheusRule: training GPU utilisation, memory and stalls (DCGM), Triton failures'] else [])),

  enabled(ctx):: ctx.spec.monitoring.serviceMonitor || ctx.spec.monitoring.alerts,
}
