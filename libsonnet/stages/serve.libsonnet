// 70-serve: Triton Inference Server with the TensorRT-LLM backend (seed 001):
// a Deployment, a Service (http, grpc, metrics), a PodDisruptionBudget and,
// with maxReplicas, a HorizontalPodAutoscaler. The model repository is a
// ConfigMap holding config.pbtxt (reviewed in Git, rendered by nemoc's
// protobuf text emitter) and the version directory; the engine stays on shared
// storage where the TensorRT-LLM stage wrote it, named by gpt_model_path.
local k8s = import 'k8s.libsonnet';
local paths = import 'paths.libsonnet';
local order = import 'stages/order.libsonnet';
local pod = import 'stages/pod.libsonnet';

{
  dir: order.dir.serve,
  component: 'serve',
  // Triton's default ports; the Service, probes and ServiceMonitor use these names.
  ports: { http: 8000, grpc: 8001, metrics: 8002 },
  // NGC tritonserver images define the user triton-server (uid 1000).
  imageUser: 1000,

  name(ctx):: k8s.boundedName(ctx.project + '-triton', 63),
  configMapName(ctx):: k8s.boundedName(ctx.project + '-triton-model', 63),
  modelName(ctx)::
    local triton = ctx.spec.stages.serve.triton;
    if std.objectHasEx(triton, 'modelName', false) then triton.modelName else ctx.project,
  selector(ctx):: {
    'app.kubernetes.io/part-of': ctx.project,
    'app.kubernetes.io/component': $.component,
    'nemoc.dev/target': ctx.target.name,
  },

  local param(key, value) = { key: key, value: { string_value: value } },
  local int32 = k8s.pbtxtEnum('TYPE_INT32'),

  // config.pbtxt of the tensorrt_llm model (tensorrtllm_backend's
  // inflight_batcher_llm/tensorrt_llm model, the fields seed 001 shows).
  modelConfig(ctx)::
    local serve = ctx.spec.stages.serve;
    local triton = serve.triton;
    {
      name: $.modelName(ctx),
      backend: 'tensorrtllm',
      max_batch_size: triton.maxBatchSize,
      model_transaction_policy: { decoupled: false },
      dynamic_batching: {
        preferred_batch_size: [triton.maxBatchSize],
        max_queue_delay_microseconds: triton.maxQueueDelayMicroseconds,
      },
      input: [
        { name: 'input_ids', data_type: int32, dims: [-1], allow_ragged_batch: true },
        { name: 'input_lengths', data_type: int32, dims: [1], reshape: { shape: [] } },
        { name: 'request_output_len', data_type: int32, dims: [1] },
      ],
      output: [
        { name: 'output_ids', data_type: int32, dims: [-1, -1] },
        { name: 'sequence_length', data_type: int32, dims: [-1] },
      ],
      // The backend places the engine on the GPUs itself (tensorrtllm_backend's
      // own configs use KIND_CPU; KIND_GPU would pin one instance per GPU).
      instance_group: [{ count: 1, kind: k8s.pbtxtEnum('KIND_CPU') }],
      parameters: [
        param('gpt_model_path', paths.engineSource(ctx, serve)),
        param('gpt_model_type', if triton.inflightBatching then 'inflight_fused_batching' else 'V1'),
        param('batch_scheduler_policy', triton.batchSchedulerPolicy),
        param('kv_cache_free_gpu_mem_fraction', k8s.decimal(triton.kvCacheFreeGpuMemFraction)),
        param('max_beam_width', '1'),
        param('exclude_input_in_output', 'true'),
      ] + (
        if std.objectHasEx(triton, 'maxTokensInPagedKvCache', false)
        then [param('max_tokens_in_paged_kv_cache', std.toString(triton.maxTokensInPagedKvCache))]
        else []
      ),
    },

  // tritonserver, or with tensor parallelism one MPI rank per GPU (what
  // tensorrtllm_backend's launch_triton_server.py runs); only rank 0 serves.
  command(ctx)::
    local tp = ctx.spec.stages.serve.triton.tensorParallel;
    local server = [
      'tritonserver',
      '--model-repository=' + paths.modelRepository,
      '--http-port=' + $.ports.http,
      '--grpc-port=' + $.ports.grpc,
      '--metrics-port=' + $.ports.metrics,
      '--disable-auto-complete-config',
    ];
    if tp == 1 then server
    else ['mpirun', '--allow-run-as-root', '-n', '1'] + server
         + std.flattenArrays([
           [
             ':',
             '-n',
             '1',
             'tritonserver',
             '--model-repository=' + paths.modelRepository,
             '--disable-auto-complete-config',
             '--allow-http=false',
             '--allow-grpc=false',
             '--allow-metrics=false',
             '--model-control-mode=explicit',
             '--load-model=' + $.modelName(ctx),
           ]
           for rank in std.range(1, tp - 1)
         ]),

  probe(path, period, failures):: {
    httpGet: { path: path, port: 'http' },
    periodSeconds: period,
    failureThreshold: failures,
  },

  configMap(ctx):: k8s.configMap(ctx, $.configMapName(ctx), {
    'config.pbtxt': k8s.pbtxtDocument($.modelConfig(ctx)),
    // Triton needs a version directory; the TensorRT-LLM backend reads the
    // engine from gpt_model_path, so it stays empty but for this note.
    'version-1': 'engine: ' + paths.engineSource(ctx, ctx.spec.stages.serve) + '\n',
  }, $.component),

  deployment(ctx)::
    local serve = ctx.spec.stages.serve;
    local triton = serve.triton;
    local placement = pod.placementFor(ctx, 'serve');
    local model = $.modelName(ctx);
    local configMap = $.configMap(ctx);
    local container = pod.container(ctx,
                                    'triton',
                                    triton.image,
                                    placement,
                                    gpus=triton.tensorParallel,
                                    resources=triton.resources,
                                    nonRoot=$.imageUser,
                                    queued=false,  // a Deployment: nemoc does not queue it
                                    mounts=[{ name: 'model-repository', mountPath: paths.modelRepository + '/' + model, readOnly: true }]) + {
      command: $.command(ctx),
      ports: [{ name: p, containerPort: $.ports[p], protocol: 'TCP' } for p in ['http', 'grpc', 'metrics']],
      // Loading an engine takes minutes: the startup probe allows 30 of them
      // before liveness (is the server up at all) and readiness (is the model
      // loaded) take over.
      startupProbe: $.probe('/v2/health/ready', 10, 180),
      readinessProbe: $.probe('/v2/health/ready', 10, 3),
      livenessProbe: $.probe('/v2/health/live', 10, 6),
    };
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: k8s.metadata(ctx, $.name(ctx), $.component),
      spec: {
        // With an autoscaler the replica count is the HPA's; Argo CD/Flux must not reset it.
        [if !std.objectHasEx(triton, 'maxReplicas', false) then 'replicas']: triton.replicas,
        selector: { matchLabels: $.selector(ctx) },
        // GPUs are scarce: replace pods one at a time without a surge pod.
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        template: pod.template(ctx, $.component, placement, [container], [{
          name: 'model-repository',
          configMap: {
            name: $.configMapName(ctx),
            items: [
              { key: 'config.pbtxt', path: 'config.pbtxt' },
              { key: 'version-1', path: '1/README' },
            ],
          },
        }], nonRoot=$.imageUser, annotations={
          // A changed config.pbtxt rolls the pods (ConfigMap volumes are not reloaded by Triton).
          'nemoc.dev/model-config-md5': std.md5(std.toString(configMap.data)),
        }),
      },
    },

  service(ctx):: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: k8s.metadata(ctx, $.name(ctx), $.component),
    spec: {
      type: 'ClusterIP',
      selector: $.selector(ctx),
      ports: [{ name: p, port: $.ports[p], targetPort: p, protocol: 'TCP' } for p in ['http', 'grpc', 'metrics']],
    },
  },

  podDisruptionBudget(ctx):: {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: k8s.metadata(ctx, $.name(ctx), $.component),
    // One replica at a time may go for node maintenance; never all of them.
    spec: { maxUnavailable: 1, selector: { matchLabels: $.selector(ctx) } },
  },

  // Scales on Triton's queue: needs the Prometheus adapter serving the
  // nv_inference_pending_request_count pod metric (custom.metrics.k8s.io).
  autoscaler(ctx)::
    local triton = ctx.spec.stages.serve.triton;
    {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: k8s.metadata(ctx, $.name(ctx), $.component),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: $.name(ctx) },
        minReplicas: triton.replicas,
        maxReplicas: triton.maxReplicas,
        metrics: [{
          type: 'Pods',
          pods: {
            metric: { name: 'nv_inference_pending_request_count' },
            target: { type: 'AverageValue', averageValue: std.toString(triton.targetPendingRequests) },
          },
        }],
      },
    },

  files(ctx)::
    local triton = ctx.spec.stages.serve.triton;
    std.foldl(function(acc, o) acc + k8s.file($.dir, o),
              [$.configMap(ctx), $.deployment(ctx), $.service(ctx), $.podDisruptionBudget(ctx)]
              + (if std.objectHasEx(triton, 'maxReplicas', false) then [$.autoscaler(ctx)] else []),
              {}),

  summary(ctx)::
    local serve = ctx.spec.stages.serve;
    local triton = serve.triton;
    'Triton (TensorRT-LLM backend) model ' + $.modelName(ctx) + ', ' + triton.replicas
    + (if std.objectHasEx(triton, 'maxReplicas', false) then ' to ' + triton.maxReplicas else '') + ' replica(s) × '
    + triton.tensorParallel + ' GPU, engine ' + paths.engineSource(ctx, serve)
    + ', ports http ' + $.ports.http + ' grpc ' + $.ports.grpc + ' metrics ' + $.ports.metrics,
}
