// 25-import-model: a HuggingFace model (spec.model.source.huggingface) ->
// the .nemo fine-tuning starts from, with NeMo's per-family converter
// (libsonnet/models.json), before training. The output path comes from
// paths.libsonnet, where the NeMo config's restore_from_path points.
local chain = import 'nemoc/stages/chain.libsonnet';
local hf = import 'nemoc/huggingface.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';
local versions = import 'nemoc/nemo/versions.libsonnet';

{
  dir: order.dir.importModel,
  component: 'import-model',

  jobName(ctx):: k8s.boundedName(ctx.project + '-import-model', 63),

  // The training stage that restores the import: the chain's first
  // (stages/chain.libsonnet); the import runs its image and framework.
  reader(ctx):: ctx.spec.stages[chain.present(ctx)[0]],

  enabled(ctx)::
    std.objectHasEx(ctx.spec.stages, 'train', false)
    && std.objectHasEx(ctx.spec.model, 'source', false)
    && std.objectHasEx(ctx.spec.model.source, 'huggingface', false),

  llamaScript:: '/opt/NeMo/scripts/checkpoint_converters/convert_llama_hf_to_nemo.py',

  // Field review A9. From NVIDIA/NeMo v2.0.0 (NeMo 24.09) the Llama importer
  // has --llama31, `type=bool, default=True`
  // (scripts/checkpoint_converters/convert_llama_hf_to_nemo.py v2.0.0..v2.4.0
  // :65-71): left out, every Llama 2 or 3.0 import gets Llama 3.1's RoPE
  // scaling (scale_positional_embedding, :122/:126) and a Llama 3.1 tokenizer
  // id (:312-316). argparse's bool('') is the only False, so nemoc passes
  // --llama31= for models other than Llama 3.1 and --llama31=True for 3.1.
  // r2.0.0rc1 (24.07) has no such argument (and reads rope_scaling['type'],
  // :94-98, which Llama 3.1 lacks: its NeMo 1 training is refused on 24.07,
  // framework_check.cc, A8/F9).
  llama31Arg(ctx)::
    local model = ctx.spec.model;
    local tag = versions.tag($.reader(ctx).image);
    if model.converters.fromHuggingface != $.llamaScript || std.primitiveEquals(tag, 'r2.0.0rc1') then []
    else
      local preset = if std.objectHasEx(model, 'preset', false) then model.preset else '';
      ['--llama31=' + (if std.startsWith(preset, 'llama3.1-') then 'True' else '')],

  // Field review A21. NVIDIA/NeMo v2.0.0 and v2.1.0 (NeMo 24.09, 24.12)
  // convert_llama_hf_to_nemo.py :107-112 map a Hugging Face rope_scaling of
  // rope_type 'llama3' (every Llama 3.1 config.json) to
  // seq_len_interpolation_factor = factor (8), and :122 sets
  // scale_positional_embedding = args.llama31 (True): Megatron then applies
  // Llama 3.1's frequency scaling AND divides positions by 8 -- RoPE scaled
  // twice, a silently wrong model. Upstream fixed it in commit bce4a77ef4
  // ("fix llama3", #11580; v2.2.0+ :112-116 set the factor to None for
  // 'llama3'). Every reader of the import takes its model_config.yaml: the
  // fine-tuning (cfg.model merged over it, megatron_gpt_finetuning.py:62),
  // the LoRA merge and the evaluation. So the Job runs the converter (runpy,
  // argv unchanged) and then appends a corrected model_config.yaml to the
  // .nemo: NeMo writes it as an uncompressed tar (save_restore_connector.py
  // v2.0.0/v2.1.0 :591 "w:") and extracts members in order
  // (_safe_extract :612-618), so the later member wins; tarfile's getmember
  // also returns the last occurrence. Appending costs one small member
  // instead of rewriting 16-140 GB. The program changes nothing when the
  // config does not carry both (a converter that is already right).
  doubleRopeTags:: ['v2.0.0', 'v2.1.0'],
  ropeFixProgram:: |||
    import io, os, runpy, sys, tarfile
    from omegaconf import OmegaConf
    sys.argv = sys.argv[1:]
    out = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--output_path=")][-1]
    runpy.run_path(sys.argv[0], run_name="__main__")
    with tarfile.open(out, "r:") as tar:
        member = [m for m in tar.getmembers() if os.path.normpath(m.name) == "model_config.yaml"][-1]
        cfg = OmegaConf.create(tar.extractfile(member).read().decode())
    if cfg.get("scale_positional_embedding") and cfg.get("seq_len_interpolation_factor") is not None:
        cfg.seq_len_interpolation_factor = None
        data = OmegaConf.to_yaml(cfg).encode()
        info = tarfile.TarInfo(member.name)
        info.size, info.mtime, info.mode = len(data), member.mtime, member.mode
        with tarfile.open(out, "a:") as tar:
            tar.addfile(info, io.BytesIO(data))
        print("nemoc: " + out + ": seq_len_interpolation_factor set to null (Llama 3.1 RoPE is scale_positional_embedding)")
  |||,
  ropeFix(ctx, argv)::
    local tag = versions.tag($.reader(ctx).image);
    local preset = if std.objectHasEx(ctx.spec.model, 'preset', false) then ctx.spec.model.preset else '';
    if ctx.spec.model.converters.fromHuggingface == $.llamaScript && std.member($.doubleRopeTags, tag)
       && std.startsWith(preset, 'llama3.1-')
    then [argv[0], '-c', $.ropeFixProgram] + argv[1:] else argv,

  // The Mixtral importer reads <input>/config.json with open() before
  // from_pretrained (load_hf_model_args asserts os.path.exists: NVIDIA/NeMo r2.0.0rc1 :151-155,
  // v2.4.0 scripts/checkpoint_converters/convert_mixtral_hf_to_nemo.py
  // :167-171): a Hub id there fails that assert. An init container
  // downloads the repository to shared storage first and the script gets the
  // folder. The Llama importer takes the Hub id (from_pretrained downloads).
  mixtralScript:: '/opt/NeMo/scripts/checkpoint_converters/convert_mixtral_hf_to_nemo.py',
  needsFolder(ctx):: !$.nemo2(ctx) && ctx.spec.model.converters.fromHuggingface == $.mixtralScript,
  hubDir(ctx):: paths.hubSnapshotDir(ctx, ctx.spec.model.source.huggingface),

  // NeMo 2: llm.import_ckpt(model, "hf://<repo>", output_path, overwrite)
  // (NVIDIA/NeMo nemo/collections/llm/api.py v2.1.0:531-536, v2.4.0:870) with
  // the model the recipe module builds (its model() factory, a run.Config:
  // fiddle builds it). output_path must be a Path: the connector derives its
  // lock file with Path.with_suffix (nemo/lightning/io/connector.py v2.1.0:84-86).
  // overwrite=True: a retried Job replaces a half-written directory instead of
  // keeping it (an existing output is otherwise kept as is, :95-99). But
  // Connector.__call__ turns overwrite off while <out>.lock exists (:84-100;
  // v2.4.0 :86-101), and a killed try leaves the lock behind: the program
  // removes the lock and the output first, or a retry would keep a
  // half-written checkpoint and succeed.
  // One GPU: the model is built on the CPU (megatron_cpu_init_context) but
  // with Transformer Engine layers, whose constructor asserts
  // torch.cuda.is_available() (transformer_engine/pytorch/module/base.py).
  nemo2Program:: |||
    import shutil
    import sys
    from importlib import import_module
    from pathlib import Path
    import fiddle as fdl
    from nemo.collections import llm
    recipe, repo, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    model = fdl.build(import_module("nemo.collections.llm.recipes." + recipe).model())
    shutil.rmtree(out, ignore_errors=True)
    out.with_suffix(".lock").unlink(missing_ok=True)
    llm.import_ckpt(model=model, source="hf://" + repo, output_path=out, overwrite=True)
  |||,
  nemo2(ctx):: std.primitiveEquals($.reader(ctx).framework, 'nemo2'),

  args(ctx)::
    local model = ctx.spec.model;
    if $.nemo2(ctx) then
      ['python3', '-c', $.nemo2Program, model.nemo2.recipe, model.source.huggingface, paths.importedNemo2(ctx)]
    else $.ropeFix(ctx, [
      'python3',
      model.converters.fromHuggingface,
      '--input_name_or_path=' + (if $.needsFolder(ctx) then $.hubDir(ctx) else model.source.huggingface),
      '--output_path=' + paths.importedNemo(ctx),
      '--precision=bf16',
    ] + $.llama31Arg(ctx)),

  // State of the imported model (paths.libsonnet, F15): the program, its
  // arguments with the output left out, the image.
  state(ctx):: paths.stateHash({ image: k8s.imageRef($.reader(ctx).image), argv: $.args(paths.drafting(ctx, 'importModel')) }),

  files(ctx)::
    local placement = pod.placementFor(ctx, 'importModel');
    local run = pod.runOnce(paths.doneMarker(paths.importDir(ctx)), [paths.importDir(ctx)], $.args(ctx));
    local container = pod.container(ctx,
                                    'import-model',
                                    $.reader(ctx).image,
                                    placement,
                                    gpus=if $.nemo2(ctx) then 1 else 0,
                                    envRefs=hf.env(ctx)) + run;
    local download = hf.snapshotArgs(ctx.spec.model.source.huggingface, $.hubDir(ctx), paths.importDir(ctx), hf.modelPatterns);
    local inits = if !$.needsFolder(ctx) then [] else [
      pod.container(ctx, 'hub-download', $.reader(ctx).image, placement, envRefs=hf.env(ctx))
      + { command: download[0:1], args: download[1:] },
    ];
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container, initContainers=inits)),

  // The directory it writes (SUMMARY.md "State directories"; F15).
  stateDir(ctx):: paths.importDir(ctx),

  summary(ctx)::
    'HuggingFace ' + ctx.spec.model.source.huggingface + ' -> '
    + (if $.nemo2(ctx) then paths.importedNemo2(ctx) + ' (NeMo 2 llm.import_ckpt)' else paths.importedNemo(ctx)),
}
