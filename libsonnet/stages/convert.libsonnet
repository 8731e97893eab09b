// 50-convert: the .nemo checkpoint -> a HuggingFace checkpoint with NeMo's
// per-family converter (libsonnet/models.json; seed 001's "NeMo to HuggingFace" step), for the
// TensorRT-LLM build and for users who want the weights elsewhere. After a
// NeMo 2 training run, its checkpoint directory -> HuggingFace with
// llm.export_ckpt (nemo2 below).
local hf = import 'nemoc/huggingface.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local versions = import 'nemoc/nemo/versions.libsonnet';
local converterArgs = std.parseJson(importstr 'nemoc/nemo/converter_args.json');  // data, not code: issue #47
local paths = import 'nemoc/paths.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';
local nemo2Checkpoint = import 'nemoc/stages/nemo2-checkpoint.libsonnet';

{
  dir: order.dir.convert,
  component: 'convert',

  jobName(ctx):: k8s.boundedName(ctx.project + '-convert', 63),

  // The converter reads --hf_input_path (and --input_tokenizer) with
  // local_files_only=True (NVIDIA/NeMo r2.0.0rc1
  // scripts/checkpoint_converters/convert_llama_nemo_to_hf.py:231,235,
  // v2.4.0 :249-260; every row in nemo/converter_args.json): a Hub id there
  // fails (field review A10). The hub-download init container first puts the
  // original model's config, weights (AutoModelForCausalLM.from_pretrained
  // loads the whole model before our weights replace its state dict) and
  // tokenizer files on shared storage, then copies the tokenizer files into
  // the output directory; the script gets local paths only.
  // --input_tokenizer is not passed: the script loads it with the slow
  // sentencepiece LlamaTokenizer, which Llama 3 repositories (no
  // tokenizer.model) cannot give: r2.0.0rc1/v2.0.0 crash (:235), v2.1.0+
  // catch it and write no tokenizer (:257-268). The copied Hub files are the
  // tokenizer the model was trained with (the preset's), for Llama 2 and 3.
  hubRepo(ctx):: ctx.spec.model.huggingface,
  hubDir(ctx):: paths.hubSnapshotDir(ctx, $.hubRepo(ctx)),

  // What the download takes from the repository: config and tokenizer files,
  // and for the Llama converter, which loads the original model whole
  // (AutoModelForCausalLM.from_pretrained), the safetensors weights and their
  // index (not original/*.pth, not *.bin). The Mixtral converter builds the
  // model from the config alone (AutoModelForCausalLM.from_config, r2.0.0rc1
  // ..v2.4.0 convert_mixtral_nemo_to_hf.py :241-243): no weights.
  // (huggingface.libsonnet modelPatterns)
  downloadPatterns(script)::
    if script == $.llamaScript then hf.modelPatterns else [p for p in hf.modelPatterns if !std.member(hf.weightPatterns, p)],

  downloadArgs(ctx)::
    hf.snapshotArgs($.hubRepo(ctx), $.hubDir(ctx), paths.huggingfaceDir(ctx),
                    $.downloadPatterns(ctx.spec.model.converters.toHuggingface)),

  llamaScript:: '/opt/NeMo/scripts/checkpoint_converters/convert_llama_nemo_to_hf.py',
  mixtralScript:: '/opt/NeMo/scripts/checkpoint_converters/convert_mixtral_nemo_to_hf.py',
  // Nemotron: the config is written from the .nemo and the tokenizer taken
  // out of it; --hf_input_path is only config.json's _name_or_path (v2.1.0
  // :380-382, convert_hf_config/extract_nemotron_tokenizer): nothing to download.
  // With --hf_output_path the script torch.saves the weights as
  // <hf_output_path>/pytorch_model.bin and calls no save_pretrained (v2.0.0
  // :334-338, v2.1.0..v2.4.0 :371-375): that file is the published model's
  // weights, and stays. (The Mixtral converter only calls save_pretrained,
  // v2.1.0 :241-246.)
  nemotronScript:: '/opt/NeMo/scripts/checkpoint_converters/convert_nemotron_nemo_to_hf.py',
  downloads(script):: script != $.nemotronScript,

  // --precision strings the script maps to a dtype (anything else falls back
  // to fp32 with a warning: Llama r2.0.0rc1 :121-128, v2.4.0 :134-141;
  // Mixtral v2.4.0 :106-113).
  precisionArg(script, precision)::
    local scripts = converterArgs.scripts;
    if std.objectHasEx(scripts, script, false) then scripts[script].precisionValues[precision] else precision,

  // The converter's command line, per script (their argparse differ, field
  // review A11). Llama: the original model's folder (--hf_input_path, local)
  // and the output folder (--hf_output_path); --cpu-only with gpus: 0.
  // Its required --output_path is where convert() torch.saves the raw state
  // dict before save_pretrained writes the model into --hf_output_path
  // (NVIDIA/NeMo r2.0.0rc1 scripts/checkpoint_converters/convert_llama_nemo_to_hf.py
  // :221-222,241-242, v2.0.0 the same; v2.1.0..v2.4.0 :234-235,271-272): a
  // second copy of the weights (13-16 GB for 7-8B in bf16) that Hugging Face
  // loaders could pick instead (field review A27). It goes to
  // paths.convertScratchFile, outside the published folder, and is removed
  // when the script ends (scratchFiles, built below).
  // Mixtral: --hf_model_name for config and tokenizer (a local folder here;
  // the script writes the tokenizer itself) and the output folder as
  // --output_path; it always runs on the CPU (cpuOnly in the table).
  argsFor(ctx, script)::
    local convert = ctx.spec.stages.convert;
    local out = paths.huggingfaceDir(ctx);
    local input = '--input_name_or_path=' + paths.nemoCheckpoint(ctx, convert);
    local precision = '--precision=' + $.precisionArg(script, convert.precision);
    if script == $.mixtralScript then [
      input,
      '--output_path=' + out,
      '--hf_model_name=' + $.hubDir(ctx),
      precision,
    ] else if script == $.nemotronScript then [
      input,
      '--hf_input_path=' + $.hubRepo(ctx),
      '--hf_output_path=' + out,
      precision,
    ] + (if std.primitiveEquals(convert.gpus, 0) then ['--cpu-only'] else [])
    else [
      input,
      '--output_path=' + paths.convertScratchFile(ctx),
      // Config of the original HuggingFace model, downloaded (local path); the weights are ours.
      '--hf_input_path=' + $.hubDir(ctx),
      '--hf_output_path=' + out,
      precision,
    ] + (if std.primitiveEquals(convert.gpus, 0) then ['--cpu-only'] else []),

  // NeMo 2: the train stage (framework nemo2) saves checkpoint directories,
  // not a .nemo. The Job exports one with llm.export_ckpt(path, target="hf",
  // output_path, overwrite) (NVIDIA/NeMo nemo/collections/llm/api.py
  // v2.1.0:604-615, v2.4.0:954-966), which loads the exporter from the
  // checkpoint's context/ directory (load_connector_from_trainer_ckpt;
  // ModelCheckpoint writes it with every checkpoint, always_save_context,
  // nemo/lightning/pytorch/callbacks/model_checkpoint.py v2.1.0:75,492-493).
  // Which checkpoint: the one AutoResume would resume
  // (stages/nemo2-checkpoint.libsonnet).
  // A LoRA run's checkpoint holds the adapter only: llm.peft.merge_lora
  // (nemo/collections/llm/peft/api.py v2.1.0:40-75, v2.4.0:76-116) merges it
  // into the base its adapter_metadata.json names, into a fresh directory
  // (Megatron's dist_checkpointing.save refuses a non-empty one), and that is
  // exported.
  // One GPU: both build the model on the CPU (megatron_cpu_init_context,
  // ModelConnector.nemo_load(cpu=True), connector.py v2.1.0:211-243) but
  // with Transformer Engine layers, whose constructor asserts
  // torch.cuda.is_available() (transformer_engine/pytorch/module/base.py).
  // The output and its lock: Connector.__call__ turns overwrite off when
  // <out>.lock exists and then keeps an existing <out> (connector.py
  // v2.1.0:84-100, v2.4.0:86-101); a killed try leaves the lock behind, so a
  // retry would "export" nothing and succeed. Both are removed first, and
  // <out> is not created beforehand.
  nemo2(ctx):: nemo2Checkpoint.reads(ctx, 'convert'),
  nemo2Lora(ctx):: std.primitiveEquals(ctx.spec.stages.train.mode, 'lora'),
  nemo2Program:: nemo2Checkpoint.pick + |||
    import shutil
    from nemo.collections import llm
    checkpoints, out, merged = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    checkpoint = newest_last(checkpoints)
    print("exporting " + str(checkpoint), flush=True)
    if merged:
        shutil.rmtree(merged, ignore_errors=True)
        llm.peft.merge_lora(lora_checkpoint_path=str(checkpoint), output_path=merged)
        checkpoint = Path(merged)
    shutil.rmtree(out, ignore_errors=True)
    out.with_suffix(".lock").unlink(missing_ok=True)
    llm.export_ckpt(path=checkpoint, target="hf", output_path=out, overwrite=True)
  |||,
  nemo2Args(ctx)::
    ['python3', '-c', $.nemo2Program, paths.checkpointDir(ctx), paths.huggingfaceDir(ctx),
     if $.nemo2Lora(ctx) then paths.mergedNemo2(ctx) else ''],

  // Releases whose Hugging Face exporter works, per case (refused before):
  //   - Llama 3.1: the Llama exporter writes rope_scaling (rope_type llama3)
  //     from NeMo 25.04 (NVIDIA/NeMo v2.3.0 nemo/collections/llm/gpt/model/llama.py
  //     HFLlamaExporter.config:958-967); v2.1.0 (:372-387) and v2.2.1
  //     (:419-433) write none, so the exported model, and the engine built
  //     from it, would apply plain RoPE to a model trained with Llama 3.1's.
  //   - Mixtral: v2.1.0's HFMixtralExporter calls io.load_ckpt, which
  //     nemo.lightning.io lacks (mixtral.py v2.1.0:313,318); fixed in v2.2.1 (:364,370).
  nemo2RopeScalingSince:: '25.04',
  nemo2ExportSince:: { mixtral: '25.02' },

  args(ctx)::
    if $.nemo2(ctx) then $.nemo2Args(ctx) else
    local script = ctx.spec.model.converters.toHuggingface;
    ['python3', script] + $.argsFor(ctx, script),
  gpus(ctx):: if $.nemo2(ctx) then 1 else ctx.spec.stages.convert.gpus,
  // The directory created before the program runs: the export's output for
  // the converters; for NeMo 2 its parent (the export must not find <out>).
  outputParent(ctx):: if $.nemo2(ctx) then paths.huggingfaceParent(ctx) else paths.huggingfaceDir(ctx),
  // Files the converter writes that are not the published model, removed
  // before it runs and when it ends (pod.runOnce): the Llama
  // converter's raw state dict. staleFiles are removed before it runs only:
  // the raw state dict nemoc before field review A27 had it write into the
  // published folder, which a newer Job's save_pretrained would leave beside
  // its safetensors.
  scratchFiles(ctx)::
    if !$.nemo2(ctx) && ctx.spec.model.converters.toHuggingface == $.llamaScript then [paths.convertScratchFile(ctx)] else [],
  staleFiles(ctx)::
    if std.length($.scratchFiles(ctx)) > 0 then [paths.huggingfaceDir(ctx) + '/pytorch_model.bin'] else [],

  // The converter's arguments checked against nemo/converter_args.json for
  // the image's NeMo tag: a script without a row there (e.g. the Mixtral
  // converter, whose argparse differs: field review A11) or an argument the
  // script does not declare is a located error instead of an argparse exit
  // in the cluster. An image whose NeMo release nemoc cannot tell is not checked.
  diagnostics(ctx)::
    if !std.objectHasEx(ctx.spec.stages, 'convert', false) then []
    else if $.nemo2(ctx) then $.nemo2Diagnostics(ctx)
    else if !std.objectHasEx(ctx.spec.model, 'converters', false) then [] else
      local convert = ctx.spec.stages.convert;
      local script = ctx.spec.model.converters.toHuggingface;
      local tag = versions.tag(convert.image);
      local scripts = converterArgs.scripts;
      local row = if !std.primitiveEquals(tag, null) && std.objectHasEx(scripts, script, false) && std.objectHasEx(scripts[script].tags, tag, false)
      then scripts[script].tags[tag] else null;
      local names = [std.split(a, '=')[0] for a in $.args(ctx) if std.startsWith(a, '--')];
      local cpuOnly = !std.primitiveEquals(row, null) && std.objectHasEx(row, 'cpuOnly', false);
      if std.primitiveEquals(tag, null) then []
      else if cpuOnly && !std.primitiveEquals(convert.gpus, 0) then [{
        code: 'convert.cpu-only',
        pointer: '/spec/stages/convert',
        atKey: true,
        message: script + ' at NeMo ' + tag + ' always restores the model on the CPU (cpu_only = True, '
                 + row.cpuOnly + '): a GPU would sit idle',
        hint: 'set spec.stages.convert.gpus: 0 and resources.memory for the whole model in float32 twice over '
              + '(the NeMo model and the Hugging Face model it fills)',
      }]
      else if std.primitiveEquals(row, null) && std.objectHasEx(scripts, script, false) && std.objectHasEx(scripts[script], 'since', false) then [{
        code: 'convert.arguments',
        pointer: '/spec/stages/convert',
        atKey: true,
        message: script + ' is not in NeMo ' + tag + ' (' + versions.release(convert.image) + '); NVIDIA/NeMo '
                 + scripts[script].since + ' is the first release that ships it',
        hint: 'use a NeMo ' + [r for r in std.objectFields(versions.releases) if versions.releases[r].nemo == scripts[script].since][0]
              + ' or newer image for stages.convert (stages.convert.image)',
      }]
      else if std.primitiveEquals(row, null) then [{
        code: 'convert.arguments',
        pointer: '/spec/stages/convert',
        atKey: true,
        message: 'nemoc knows no command line of ' + script + ' at NeMo ' + tag
                 + ' (libsonnet/nemo/converter_args.json); it cannot convert this model family',
        hint: 'convert with a llama-family preset, or remove stages.convert',
      }]
      else [{
        code: 'convert.arguments',
        pointer: '/spec/stages/convert',
        atKey: true,
        message: script + ' at NeMo ' + tag + ' declares no ' + n,
      } for n in names if !std.objectHasEx(row.args, n, false)],

  nemo2Diagnostics(ctx)::
    local convert = ctx.spec.stages.convert;
    local release = versions.release(convert.image);
    local preset = if std.objectHasEx(ctx.spec.model, 'preset', false) then ctx.spec.model.preset else '';
    local family = if std.objectHasEx(ctx.spec.model, 'family', false) then ctx.spec.model.family else '';
    if std.objectHasEx($.nemo2ExportSince, family, false) && !versions.atLeast(convert.image, $.nemo2ExportSince[family]) then [{
      code: 'convert.nemo2-export',
      pointer: '/spec/stages/convert',
      atKey: true,
      message: "NeMo " + versions.release(convert.image) + "'s Hugging Face " + family + ' exporter (llm.export_ckpt) '
               + 'fails: it calls io.load_ckpt, which its nemo.lightning.io lacks; NeMo ' + $.nemo2ExportSince[family]
               + ' is the first release whose exporter works',
      hint: 'use a NeMo ' + $.nemo2ExportSince[family] + ' or newer image for stages.convert (stages.convert.image)',
    }]
    else if std.startsWith(preset, 'llama3.1-') && !versions.atLeast(convert.image, $.nemo2RopeScalingSince) then [{
      code: 'convert.nemo2-export',
      pointer: '/spec/stages/convert',
      atKey: true,
      message: "NeMo " + release + "'s Hugging Face Llama exporter (llm.export_ckpt) writes no rope_scaling: the exported "
               + preset + ' model, and an engine built from it, would apply plain RoPE instead of '
               + "Llama 3.1's; NeMo " + $.nemo2RopeScalingSince + ' (NVIDIA/NeMo v2.3.0) is the first release that writes it',
      hint: 'use a NeMo ' + $.nemo2RopeScalingSince + ' or newer image for stages.convert (stages.convert.image)',
    }] else [],

  // The conversion Job (a Job or the JobSet wrapping it), built once per
  // target: nemoc.libsonnet binds it as ctx.convertBuilt, which files() emits
  // and the engine build hashes (it reads this Job's output, field review C5).
  // State of the Hugging Face checkpoint (paths.libsonnet, F15): converter,
  // arguments (the checkpoint read, precision) and the Hub download with the
  // output left out, the image.
  state(ctx)::
    local draft = paths.drafting(ctx, 'convert');
    paths.stateHash({
      image: k8s.imageRef(ctx.spec.stages.convert.image),
      argv: $.args(draft),
      download: if !$.nemo2(ctx) && $.downloads(ctx.spec.model.converters.toHuggingface) then $.downloadArgs(draft) else [],
    }),

  built(ctx)::
    local convert = ctx.spec.stages.convert;
    local placement = pod.placementFor(ctx, 'convert');
    local run = pod.runOnce(paths.doneMarker(paths.huggingfaceDir(ctx)), [$.outputParent(ctx)], $.args(ctx),
                            stale=$.staleFiles(ctx), scratch=$.scratchFiles(ctx));
    local container = pod.container(ctx,
                                    'convert',
                                    convert.image,
                                    placement,
                                    gpus=$.gpus(ctx),
                                    resources=convert.resources,
                                    envRefs=hf.env(ctx)) + run;
    // The download needs no GPU: the same cpu/memory, HF_TOKEN and HF_HOME.
    local download = pod.container(ctx,
                                   'hub-download',
                                   convert.image,
                                   placement,
                                   resources=convert.resources,
                                   envRefs=hf.env(ctx))
                     + (local download = $.downloadArgs(ctx); { command: download[0:1], args: download[1:] });
    pod.job(ctx, $.jobName(ctx), $.component, placement, container,
            upstream=pod.upstreamCheckpoint(ctx, convert),
            initContainers=if !$.nemo2(ctx) && $.downloads(ctx.spec.model.converters.toHuggingface) then [download] else []),

  files(ctx):: k8s.file($.dir, ctx.convertBuilt),

  // The directory it writes (SUMMARY.md "State directories"; F15).
  stateDir(ctx):: paths.huggingfaceDir(ctx),

  summary(ctx)::
    if $.nemo2(ctx) then
      'the newest finished *-last checkpoint in ' + paths.checkpointDir(ctx)
      + (if $.nemo2Lora(ctx) then ', its LoRA adapter merged into the base (llm.peft.merge_lora -> ' + paths.mergedNemo2(ctx) + ')' else '')
      + ' -> HuggingFace ' + paths.huggingfaceDir(ctx) + ' (NeMo 2 llm.export_ckpt: config, weights and tokenizer from the checkpoint; loaded on the CPU, 1 GPU for Transformer Engine)'
    else
    local convert = ctx.spec.stages.convert;
    local script = ctx.spec.model.converters.toHuggingface;
    paths.nemoCheckpoint(ctx, convert) + ' -> HuggingFace ' + paths.huggingfaceDir(ctx)
    + ' (' + (if !$.downloads(script) then 'config and tokenizer written from the .nemo'
              else (if script == $.llamaScript then 'config, weights and tokenizer' else 'config and tokenizer')
                   + ' of ' + $.hubRepo(ctx) + ' downloaded to ' + $.hubDir(ctx) + ' first')
    + (if std.length($.scratchFiles(ctx)) > 0 then '; the raw state dict the converter saves first goes to ' + paths.convertScratchFile(ctx) + ' and is removed' else '')
    + (if std.primitiveEquals(convert.gpus, 0) then '; on CPU' else '') + ')',
}
