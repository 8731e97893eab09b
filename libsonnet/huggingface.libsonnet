// Hugging Face Hub access: which pods load a Hub repository at run time,
// which repositories are gated (a download needs a token of an account that
// accepted the licence), and the environment those pods get: HF_TOKEN from
// the Secret the spec names (key HF_TOKEN) and HF_HOME on shared storage, so
// the ranks of a training share one download instead of each fetching the
// same files (field-review.md A3).
local chain = import 'nemoc/stages/chain.libsonnet';
local paths = import 'nemoc/paths.libsonnet';

{
  // Gated repositories: every meta-llama/* repository ("You need to agree to
  // share your contact information to access this model", huggingface.co/meta-llama/Llama-3.1-8B,
  // Llama-2-7b-hf, Meta-Llama-3-8B) and Mixtral 8x7B (huggingface.co/mistralai/Mixtral-8x7B-v0.1).
  gatedOwners:: ['meta-llama'],
  gatedRepos:: ['mistralai/Mixtral-8x7B-v0.1', 'mistralai/Mixtral-8x7B-Instruct-v0.1'],

  // A Hub id (owner/name), not a path on a volume.
  isHubId(id):: std.isString(id) && !std.startsWith(id, '/') && !std.startsWith(id, '.') && std.length(std.split(id, '/')) == 2,
  gated(id):: $.isHubId(id) && (std.member($.gatedOwners, std.split(id, '/')[0]) || std.member($.gatedRepos, id)),

  source(ctx):: if std.objectHasEx(ctx.spec.model, 'source', false) then ctx.spec.model.source else {},
  tokenSecret(ctx):: std.objectHasEx($.source(ctx), 'hfTokenSecret', false),

  // A Hub repository downloaded to shared storage by an init container, for
  // scripts that need a local folder (the converters). argv: python3 -c
  // <program> <repo> <local dir> <tokenizer dir> <patterns...>;
  // no value passes through a shell. huggingface_hub ships in every NeMo
  // container (transformers needs it); snapshot_download resumes and skips
  // files already present, so a retried Job downloads nothing twice.
  snapshotProgram:: |||
    import shutil, sys
    from pathlib import Path
    from huggingface_hub import snapshot_download
    repo, local, out, patterns = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:]
    snapshot_download(repo_id=repo, local_dir=str(local), allow_patterns=patterns)
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(local.iterdir()):
        if f.is_file() and (f.name.startswith("tokenizer") or f.name == "special_tokens_map.json"):
            shutil.copy(f, out / f.name)
            print("tokenizer file " + f.name + " -> " + str(out))
  |||,

  // What a converter reads of a Hub repository: the configs, the tokenizer
  // and the safetensors weights with their index (not original/*.pth, not
  // *.bin). The stages that need no weights drop weightPatterns.
  modelPatterns:: [
    'config.json',
    'generation_config.json',
    '*.safetensors',
    'model.safetensors.index.json',
    'tokenizer*',
    'special_tokens_map.json',
  ],
  weightPatterns:: ['*.safetensors', 'model.safetensors.index.json'],

  // The tokenizer files are also copied into <tokenizer dir>.
  snapshotArgs(repo, localDir, tokenizerDir, patterns)::
    ['python3', '-c', $.snapshotProgram, repo, localDir, tokenizerDir] + patterns,

  // HF_HOME: one cache per results volume, shared by every stage and rank.
  home(ctx):: ctx.storage.results.mountPath + '/.cache/huggingface',

  // Environment entries (k8s env list form) for a pod that may use the Hub.
  env(ctx)::
    [{ name: 'HF_HOME', value: $.home(ctx) }]
    + (if $.tokenSecret(ctx)
       then [{ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: $.source(ctx).hfTokenSecret, key: 'HF_TOKEN' } } }]
       else []),

  // The gated repositories the pipeline downloads, with the spec field that
  // names each: the tokenizer (NeMo 1 pretraining builds it with
  // AutoTokenizer.from_pretrained(type); NeMo 2 pretraining recipes the same; data
  // preparation tokenizes with it) and the import stage's source.
  hubUses(ctx)::
    local stages = ctx.spec.stages;
    // (No tokenizer: a preset without a default one, and no stage that reads it.)
    local tokenizer = std.get(ctx.spec.model, 'tokenizer', { library: '' });
    local train = if std.objectHasEx(stages, 'train', false) then stages.train else null;
    local pretraining = [k for k in chain.present(ctx) if std.primitiveEquals(stages[k].mode, 'pretrain')];
    local tokenizerFromHub =
      std.primitiveEquals(tokenizer.library, 'huggingface') && std.objectHasEx(tokenizer, 'type', false)
      && (std.objectHasEx(stages, 'dataPrep', false) || std.length(pretraining) > 0);
    local preset = if std.objectHasEx(ctx.spec.model, 'preset', false) then ctx.spec.model.preset else '';
    local hasRepo = std.objectHasEx(ctx.spec.model, 'huggingface', false);
    local pointer = if std.objectHasEx(ctx.spec.model, 'preset', false) && !std.objectHasEx(ctx.spec.model, 'architecture', false)
    then '/spec/model/preset' else '/spec/model/tokenizer/type';
    (if tokenizerFromHub && $.gated(tokenizer.type) then [{ repo: tokenizer.type, what: 'tokenizer', pointer: pointer }] else [])
    + (if std.objectHasEx($.source(ctx), 'huggingface', false) && $.gated($.source(ctx).huggingface)
       then [{ repo: $.source(ctx).huggingface, what: 'weights', pointer: '/spec/model/source/huggingface' }] else [])
    // NeMo's Llama importer writes the Hub id of a Llama 3 repository as the
    // .nemo's tokenizer (NVIDIA/NeMo r2.0.0rc1
    // scripts/checkpoint_converters/convert_llama_hf_to_nemo.py:292-297,
    // v2.4.0 :314-329), and NeMo 1 fine-tuning restores that tokenizer.
    + (if !std.primitiveEquals(train, null) && !std.primitiveEquals(train.framework, 'nemo2') && !std.primitiveEquals(train.mode, 'pretrain')
          && std.objectHasEx($.source(ctx), 'nemo', false) && std.startsWith(preset, 'llama3')
          && hasRepo && $.gated(ctx.spec.model.huggingface)
       then [{ repo: ctx.spec.model.huggingface, what: "tokenizer the .nemo names (NeMo's Llama 3 importer writes the Hub id)",
               pointer: '/spec/model/source/nemo' }] else [])
    // The NeMo -> HF conversion downloads the original repository first
    // (stages/convert.libsonnet, A10).
    + (if std.objectHasEx(stages, 'convert', false) && hasRepo && $.gated(ctx.spec.model.huggingface)
       then [{ repo: ctx.spec.model.huggingface, what: 'config, weights and tokenizer the converter loads before replacing the weights',
               pointer: '/spec/stages/convert', atKey: true }] else []),

  diagnostics(ctx)::
    if $.tokenSecret(ctx) then [] else [
      {
        code: 'spec.hf-token',
        pointer: u.pointer,
        [if std.objectHasEx(u, 'atKey', false) then 'atKey']: u.atKey,
        message: 'the pipeline downloads the gated Hugging Face repository ' + u.repo + ' (' + u.what
                 + ') and the spec names no token Secret; the download fails with 401',
        hint: 'create a Secret with key HF_TOKEN (kubectl create secret generic hf-token --from-literal=HF_TOKEN=...) '
              + 'and set spec.model.source.hfTokenSecret: hf-token'
              + (if std.primitiveEquals(u.what, 'tokenizer')
                 then ', or use a tokenizer on shared storage (tokenizer: {library: huggingface, type: /data/tokenizer-dir} '
                      + 'or {library: sentencepiece, model: /data/tokenizer.model})'
                 else ''),
      }
      for u in $.hubUses(ctx)
    ],
}
