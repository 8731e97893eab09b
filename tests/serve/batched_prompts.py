#!/usr/bin/python3
"""Prompts of different lengths in one request reach the engine intact, and their answers come
back as text (A22, issue #42 item 4 "batched serving tested end to end").

tensorrtllm_backend splits a request of several rows into one engine request per row and keeps the
first input_lengths[row] ids of each row of input_ids (v0.17.0 inflight_batcher_llm/src/utils.cc:
193-202, "Use input_length to strip off padding for inputTokens"), so the preprocessing model must
pad each prompt on the right, as upstream's does (all_models/inflight_batcher_llm/preprocessing/1/
model.py v0.11.0:284-292, v0.17.0:608-616: np.pad(seq, (0, max_len - len)) with the tokenizer's pad
id). A model that pads on the left hands the engine pads plus the head of every shorter prompt.

For every model repository nemoc generates (every example and test spec with a serve stage; the
same bytes as the committed out/ and tests/golden/ trees, which GoldenTest holds to nemoc's output),
this test runs the generated preprocessing and postprocessing model.py with the stand-ins of
triton_python.py (triton_python_backend_utils; a byte-level tokenizer that pads on padding_side as
transformers does) along the ensemble's wiring, with a stand-in engine between them:
  text_input [5 prompts of 2 to 64 ids with BOS, one non-ASCII], max_tokens -> preprocessing
  -> engine: per row, input_ids[row][0:input_lengths[row]] (utils.cc:193-202); answers with the
     prompt it received, capped at request_output_len; each answer padded after its length with
     -1 (src/model_instance_state.cc:966-969), sequence_length its length (:986-990)
  -> postprocessing -> text_output
and checks that
  - the ids the engine receives for each row equal the tokenizer's encoding of that prompt alone
    (add_special_tokens as the preprocessing config says) -- the A22 contract;
  - the ids after each row's length are the tokenizer's pad id (upstream's constant_values);
  - prompts padded through the tokenizer preprocessing loads (padding_side) would reach the
    engine intact too (the model pads by hand, as upstream; its padding_side must not disagree);
  - input_lengths, request_output_len, end_id and pad_id have one row per prompt;
  - postprocessing returns each prompt's own answer, in order (it reads the first
    sequence_length ids of each row, upstream postprocessing/1/model.py v0.17.0:130-141).
Both tensorrtllm_backend releases nemoc serves are exercised (24.07: v0.11.0; 25.01: v0.17.0); the
model files are the same for both. Not modelled: the real backend takes a request of several rows
only with decoupled_mode true at v0.17.0 (src/utils.cc:790-793), and v0.11.0 reads a request as one
prompt (src/utils.h:186-201 flattens input_ids; model_instance_state.cc:691).

Usage: batched_prompts.py <nemoc> <source dir>
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_python as tp  # noqa: E402  (exits 77, or 1 under CI=true, without numpy/yaml)
import numpy as np  # noqa: E402

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
RELEASES = {"24.07", "25.01"}
PROMPTS = ["Hi", "What is machine learning?", "A",
           "Tell me a story about a dragon who learned to fly over the sea.",
           "Grüß Gott, wie geht's?"]
MAX_TOKENS = 64
failures = []
tp.install()


def fail(label, message):
    failures.append("%s: %s" % (label, message))


def rows(array, name, label, batch):
    """array as [batch] ints: a [batch, 1] tensor (Triton reshapes it to [batch] for the engine)."""
    a = np.asarray(array)
    if a.shape not in ((batch, 1), (batch,)):
        fail(label, "%s has shape %s, want [%d, 1] (one row per prompt)" % (name, a.shape, batch))
        return None
    return [int(x) for x in a.reshape(batch)]


def engine(label, tensors, repo):
    """The tensorrt_llm model as tensorrtllm_backend v0.17.0 reads a request of several rows:
    (input_ids, the ids it receives per row, its outputs: each prompt echoed without BOS, capped
    at request_output_len), or None after a failure."""
    in_map, batch = repo.in_map(repo.engine), len(PROMPTS)
    for name in ("input_ids", "input_lengths", "request_output_len"):
        if in_map.get(name) not in tensors:
            fail(label, "the ensemble feeds the engine's %s from %s, which no earlier step produced" % (name, in_map.get(name)))
            return None
    ids = np.asarray(tensors[in_map["input_ids"]])
    lengths = rows(tensors[in_map["input_lengths"]], "input_lengths", label, batch)
    output_len = rows(tensors[in_map["request_output_len"]], "request_output_len", label, batch)
    for name in ("end_id", "pad_id"):
        if in_map.get(name) in tensors:
            rows(tensors[in_map[name]], name, label, batch)
    if lengths is None or output_len is None or ids.ndim != 2 or ids.shape[0] != batch:
        fail(label, "input_ids has shape %s, want [%d, longest prompt]" % (ids.shape, batch))
        return None
    # src/utils.cc:193-202: slice row b, then its first inputLength ids.
    received = [[int(t) for t in ids[b][0:lengths[b]]] for b in range(batch)]
    answers = [r[1:1 + output_len[b]] if r[:1] == [1] else r[:output_len[b]] for b, r in enumerate(received)]
    width = max(len(a) for a in answers)
    outputs = {"output_ids": np.array([[a + [-1] * (width - len(a))] for a in answers], dtype=np.int32),
               "sequence_length": np.array([[len(a)] for a in answers], dtype=np.int32)}
    return ids, received, outputs


def check_repository(repo):
    label = repo.label
    pre_cfg = repo.config("preprocessing")
    add_special = pre_cfg["parameters"].get("add_special_tokens", {}).get("string_value", "true").lower() in ("", "true", "1", "t", "y", "yes")
    reference = tp.Tokenizer(pre_cfg["parameters"]["tokenizer_dir"]["string_value"])
    pad_id = reference.SPECIAL[reference.eos_token]  # no pad token: the models use EOS (as upstream)

    tensors = {"text_input": np.array([[p.encode("utf-8")] for p in PROMPTS], dtype=np.object_),
               "max_tokens": np.full((len(PROMPTS), 1), MAX_TOKENS, dtype=np.int32)}
    pre = repo.model("preprocessing")
    tokenizer = tp.instances[-1]  # the one preprocessing's initialize() loaded
    response = pre.execute([repo.request("preprocessing", tensors)])[0]
    if response.error is not None:
        fail(label, "preprocessing answered with an error: %s" % response.error)
        return
    produced = {t.name(): t.as_numpy() for t in response.output_tensors}
    for out, tensor in repo.out_map("preprocessing").items():
        if out in produced:
            tensors[tensor] = produced[out]

    result = engine(label, tensors, repo)
    if result is None:
        return
    ids, received, outputs = result
    for b, prompt in enumerate(PROMPTS):
        want = reference.encode(prompt, add_special_tokens=add_special)
        if received[b] != want:
            fail(label, "prompt %d %r reaches the engine as %s, not its own encoding %s (input_ids row %s)"
                 % (b, prompt, received[b], want, [int(t) for t in ids[b]]))
        pads = [int(t) for t in ids[b][len(want):]]
        if received[b] == want and pads != [pad_id] * len(pads):
            fail(label, "prompt %d is followed by %s, not the tokenizer's pad id %d" % (b, pads, pad_id))

    # The model's tokenizer is set up for the same contract: prompts padded through it
    # (tokenizer(texts, padding=True), which honours padding_side) also reach the engine intact.
    # The model pads by hand today, as upstream does; this keeps padding_side from saying otherwise.
    padded = tokenizer(PROMPTS, add_special_tokens=add_special, padding=True)["input_ids"]
    for b, prompt in enumerate(PROMPTS):
        want = reference.encode(prompt, add_special_tokens=add_special)
        if padded[b][0:len(want)] != want:
            fail(label, "preprocessing loads its tokenizer with padding_side=%r: prompt %d %r padded through it"
                 " reaches the engine as %s" % (tokenizer.padding_side, b, prompt, padded[b][0:len(want)]))

    for out, tensor in repo.out_map(repo.engine).items():
        if out in outputs:
            tensors[tensor] = outputs[out]
    response = repo.model("postprocessing").execute([repo.request("postprocessing", tensors)])[0]
    if response.error is not None:
        fail(label, "postprocessing answered with an error: %s" % response.error)
        return
    produced = {t.name(): t.as_numpy() for t in response.output_tensors}
    text = [[x.decode("utf-8") for x in np.asarray(row).reshape(-1)] for row in produced.get("OUTPUT", [])]
    if text != [[p] for p in PROMPTS]:
        fail(label, "postprocessing OUTPUT %r, want each prompt's own answer %r" % (text, [[p] for p in PROMPTS]))


seen, checked = set(), 0
for repo in tp.repositories(NEMOC, SRC, failures):
    seen.add(repo.release)
    try:
        check_repository(repo)
    except Exception as e:  # a model that raises is a finding, not a test crash
        fail(repo.label, "%s: %r" % (type(e).__name__, e))
    checked += 1
if seen != RELEASES:
    failures.append("Triton releases exercised: %s, want %s" % (sorted(seen), sorted(RELEASES)))
for f in failures:
    print(f, file=sys.stderr)
print("%d model repositories run with %d prompts of %s tokens in one request (releases %s), %d problems"
      % (checked, len(PROMPTS), sorted({len(tp.Tokenizer("").encode(p)) for p in PROMPTS}), sorted(seen), len(failures)))
sys.exit(1 if failures or checked == 0 else 0)
