// The pipeline's stages in order: the one table of stage keys (spec.stages.<key>;
// importModel, mergeLora and monitoring are implied by spec.model.source.huggingface,
// a LoRA train stage read by evaluate or convert, and spec.monitoring) and their output directories. The numeric prefix of a
// directory IS the stage's position: kustomize, SUMMARY.md and the GitOps
// objects (sync waves, Flux dependsOn) all derive the order from it.
local stages = [
    { key: 'base', dir: '00-base' },
    // Implied by spec.monitoring. Right after base, not after serving: its
    // alerts watch training (DCGM GPU metrics of the training pods), so they
    // must be in place while training runs, and nothing it holds waits on a
    // workload (a ServiceMonitor for a Service that does not exist yet scrapes
    // nothing; a rule without series fires nothing).
    { key: 'monitoring', dir: '05-monitoring' },
    { key: 'ncclTest', dir: '10-nccl-test' },
    { key: 'dataPrep', dir: '20-data-prep' },
    // Implied by spec.model.source.huggingface: the .nemo that training fine-tunes.
    { key: 'importModel', dir: '25-import-model' },
    // spec.stages.pretrain: the first stage of a training chain
    // (stages/chain.libsonnet), whose final .nemo the train stage restores.
    { key: 'pretrain', dir: '28-pretrain' },
    { key: 'train', dir: '30-train' },
    // Implied by a LoRA train stage whose checkpoint evaluate or convert
    // reads: the adapter merged into the base model.
    { key: 'mergeLora', dir: '35-merge-lora' },
    { key: 'evaluate', dir: '40-evaluate' },
    { key: 'convert', dir: '50-convert' },
    { key: 'tensorrtLLM', dir: '60-tensorrt-llm' },
    { key: 'serve', dir: '70-serve' },
];
// Bound once: a field that computes is computed again on every access, and
// every stage reads its directory from here.
local dirs = { [s.key]: s.dir for s in stages };

{
  stages: stages,
  dir: dirs,
  // What serves the model once the pipeline has made it. Argo CD delivers
  // these directories in an Application of their own, after the pipeline's
  // (gitops.libsonnet, field review C11 and decision F4).
  servingDirs: [dirs.serve],
}
