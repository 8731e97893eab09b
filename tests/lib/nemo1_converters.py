"""Running the NeMo 1 -> Hugging Face conversion Jobs outside a NeMo container, for
conformance.convert_args: stand-ins of the modules NeMo's converter scripts import (torch,
transformers, lightning, nemo, megatron, huggingface_hub) that write marked files instead of
weights, and stand-ins of the scripts' own file handling for runs without an NVIDIA/NeMo mirror.

With NEMOC_NEMO_GIT the test runs the scripts themselves (scripts/checkpoint_converters/
convert_{llama,mixtral,nemotron}_nemo_to_hf.py at the image's tag) on these modules; without
it, STANDINS below, which do what those scripts do with files (lines cited per script).

Every file a stand-in module writes starts with a marker naming its writer, so the test can
tell what a folder holds: WRITERS["torch.save"] (a raw state dict), WRITERS["model"] (what a
Hugging Face model's save_pretrained writes), WRITERS["tokenizer"] (a tokenizer's
save_pretrained), WRITERS["hub"] (a Hub download).
"""
import json
import os

WRITERS = {"torch.save": "nemoc-stub torch.save\n", "model": "nemoc-stub model.save_pretrained\n",
           "tokenizer": "nemoc-stub tokenizer.save_pretrained\n", "hub": "nemoc-stub hub download\n"}

# What save_pretrained writes for a model (transformers >= 4.35 writes safetensors shards and
# their index by default; NeMo 24.07 ships 4.40 and v2.4.0 pins >=4.51,
# requirements/requirements_lightning.txt:8) and for a fast tokenizer.
MODEL_FILES = ("config.json", "generation_config.json", "model-00001-of-00002.safetensors",
               "model-00002-of-00002.safetensors", "model.safetensors.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
# A Hub repository as the download sees it (a Llama 2 repository has .bin shards too).
HUB_FILES = ("config.json", "generation_config.json", "model-00001-of-00002.safetensors",
             "model-00002-of-00002.safetensors", "model.safetensors.index.json",
             "pytorch_model-00001-of-00002.bin", "original/consolidated.00.pth") + TOKENIZER_FILES

# The .nemo's model_config.yaml, as MegatronGPTModel.restore_from(return_config=True) returns
# it: every key the three scripts read, tiny sizes; the tokenizer is a SentencePiece model in
# the archive (Nemotron-4's .nemo, the NeMo-Framework-Launcher nemotron configs).
NEMO_TOKENIZER = "abc123_tokenizer.model"
NEMO_CONFIG = {
    "precision": "bf16", "hidden_size": 8, "num_attention_heads": 2, "num_layers": 1,
    "ffn_hidden_size": 16, "num_query_groups": 2, "kv_channels": 4, "init_method_std": 0.02,
    "max_position_embeddings": 64, "encoder_seq_length": 64, "layernorm_epsilon": 1e-5,
    "rotary_base": 10000, "rotary_percentage": 0.5, "num_moe_experts": 2, "moe_router_topk": 2,
    "mcore_gpt": True, "activation": "fast-swiglu",
    "tokenizer": {"library": "sentencepiece", "type": None, "model": "nemo:" + NEMO_TOKENIZER},
}
ACTIVATION = {"nemotron": "squared-relu"}


def marked(writer):
    return f"""
import os
_MARK = {writer!r}
def _write(path, writer=_MARK):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        f.write(writer)
"""


STUBS = {
    "torch/__init__.py": marked(WRITERS["torch.save"]) + """
import json
from . import nn
class dtype:
    def __init__(self, name): self.name = name
    def __repr__(self): return "torch." + self.name
float32, float16, bfloat16 = dtype("float32"), dtype("float16"), dtype("bfloat16")
def device(name): return name
class Tensor:
    shape = (4, 4)
    def reshape(self, *a, **k): return self
    def __getitem__(self, k): return self
    def to(self, *a, **k): return self
def cat(tensors, *a, **k): return Tensor()
def arange(*a, **k): return Tensor()
def chunk(t, n, dim=0): return [Tensor() for _ in range(n)]
def save(obj, path):
    _write(path)
    with open(path, "a") as f:
        f.write(json.dumps(sorted(obj)))
def load(path, *a, **k):
    with open(path) as f:
        text = f.read()
    if not text.startswith(_MARK):
        raise RuntimeError(path + " is not a saved state dict")
    return {k: Tensor() for k in json.loads(text[len(_MARK):])}
""",
    "torch/nn/__init__.py": "",
    "lightning/__init__.py": "",
    "lightning/pytorch/__init__.py": "from .trainer.trainer import Trainer\n",
    "lightning/pytorch/trainer/__init__.py": "",
    "lightning/pytorch/trainer/trainer.py": "class Trainer:\n    def __init__(self, *a, **k): pass\n",
    "pytorch_lightning/__init__.py": "from .trainer.trainer import Trainer\n",
    "pytorch_lightning/trainer/__init__.py": "",
    "pytorch_lightning/trainer/trainer.py": "class Trainer:\n    def __init__(self, *a, **k): pass\n",
    "megatron/__init__.py": "",
    "megatron/core/__init__.py": "",
    "megatron/core/parallel_state.py": "def set_expert_model_parallel_world_size(n): pass\n",
    "nemo/__init__.py": "",
    "nemo/utils/__init__.py": "import logging\nlogging.basicConfig(level=logging.INFO)\n",
    "nemo/collections/__init__.py": "",
    "nemo/collections/nlp/__init__.py": "",
    "nemo/collections/nlp/parts/__init__.py": "",
    "nemo/collections/nlp/parts/nlp_overrides.py": "class NLPDDPStrategy:\n    def __init__(self, *a, **k): pass\n",
    "nemo/collections/nlp/models/__init__.py": "",
    "nemo/collections/nlp/models/language_modeling/__init__.py": "",
    "nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py": """
import json, os
from omegaconf import OmegaConf
import torch
class _StateDict(dict):
    def __missing__(self, key): return torch.Tensor()
class _Tokenizer:
    bos_id, eos_id = 2, 3
class MegatronGPTModel:
    @classmethod
    def restore_from(cls, restore_path, trainer=None, return_config=False, override_config_path=None,
                     map_location=None, **kwargs):
        if not os.path.exists(restore_path):
            raise FileNotFoundError(restore_path)
        cfg = OmegaConf.create(json.loads(os.environ["NEMOC_NEMO_CONFIG"]))
        if return_config:
            return cfg
        model = cls()
        model.cfg = override_config_path if override_config_path is not None else cfg
        model.padded_vocab_size, model.tokenizer = 256, _Tokenizer()
        return model
    def state_dict(self): return _StateDict()
""",
    "nemo/collections/common/__init__.py": "",
    "nemo/collections/common/tokenizers/__init__.py": "",
    "nemo/collections/common/tokenizers/huggingface/__init__.py": "",
    "nemo/collections/common/tokenizers/huggingface/auto_tokenizer.py": "class AutoTokenizer:\n    pass\n",
    "transformers/__init__.py": marked(WRITERS["model"]) + f"""
import os
from . import convert_slow_tokenizer
MODEL_FILES, TOKENIZER_FILES = {MODEL_FILES!r}, {TOKENIZER_FILES!r}
def _local(path, needs):
    # local_files_only=True, or a name that is no local folder: Hugging Face would go to the Hub.
    if not os.path.isfile(os.path.join(str(path), needs)):
        raise OSError(f"{{path}}: no {{needs}} in a local folder (the Job would download it from the Hub)")
class _Model:
    def load_state_dict(self, state_dict, *a, **k):
        if os.environ.get("NEMOC_FAIL") == "load_state_dict":
            raise RuntimeError("the try is killed here")
    def resize_token_embeddings(self, n): pass
    def save_pretrained(self, path, **k):
        for name in MODEL_FILES:
            _write(os.path.join(path, name))
class AutoModelForCausalLM:
    @classmethod
    def from_pretrained(cls, path, *a, **k):
        _local(path, "config.json")
        return _Model()
    @classmethod
    def from_config(cls, config, **k): return _Model()
class AutoConfig:
    @classmethod
    def from_pretrained(cls, path, *a, **k):
        _local(path, "config.json")
        return cls()
class _Tokenizer:
    def __init__(self, *a, **k): pass
    def __len__(self): return 256
    def save_pretrained(self, path, **k):
        for name in TOKENIZER_FILES:
            _write(os.path.join(path, name), {WRITERS["tokenizer"]!r})
class AutoTokenizer(_Tokenizer):
    @classmethod
    def from_pretrained(cls, path, *a, **k):
        _local(path, "tokenizer_config.json")
        return cls()
class LlamaTokenizer(_Tokenizer):
    @classmethod
    def from_pretrained(cls, path, *a, **k):
        _local(path, "tokenizer.model")
        return cls()
class LlamaTokenizerFast(_Tokenizer): pass
class PreTrainedTokenizerFast(_Tokenizer): pass
""",
    "transformers/convert_slow_tokenizer.py": """
def convert_slow_tokenizer(tokenizer): return tokenizer
class LlamaConverter:
    def __init__(self, *a, **k): pass
    def converted(self): return None
class TikTokenConverter(LlamaConverter): pass
""",
    "huggingface_hub/__init__.py": marked(WRITERS["hub"]) + f"""
import fnmatch, os
HUB_FILES = {HUB_FILES!r}
def snapshot_download(repo_id, local_dir=None, allow_patterns=None, **k):
    for name in HUB_FILES:
        if allow_patterns is None or any(fnmatch.fnmatch(name, p) for p in allow_patterns):
            _write(os.path.join(local_dir, name))
    return local_dir
""",
}

# The scripts' handling of files, for runs without NEMOC_NEMO_GIT; they use the modules above.
STANDINS = {
    # NVIDIA/NeMo scripts/checkpoint_converters/convert_llama_nemo_to_hf.py: get_args (--output_path
    # required, v2.1.0:70); __main__ (:281-297): convert() torch.saves the state dict to
    # --output_path after os.makedirs(dirname) (:234-235), then, with --hf_input_path and
    # --hf_output_path, replace_hf_weights_and_tokenizer loads the original model
    # (local_files_only, :249-253), torch.loads --output_path (:254), save_pretrained into
    # --hf_output_path (:271-272). r2.0.0rc1/v2.0.0 the same (:221-222, :231-242, :251-267).
    "convert_llama_nemo_to_hf.py": """
import os, sys
from argparse import ArgumentParser
import torch
from transformers import AutoModelForCausalLM, LlamaTokenizer
from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel
p = ArgumentParser()
p.add_argument("--input_name_or_path", required=True)
p.add_argument("--output_path", required=True)
for a in ("--hf_input_path", "--hf_output_path", "--input_tokenizer", "--hf_output_tokenizer", "--precision"):
    p.add_argument(a)
p.add_argument("--cpu-only", action="store_true")
args = p.parse_args()
model = MegatronGPTModel.restore_from(args.input_name_or_path, return_config=False)
os.makedirs(os.path.dirname(args.output_path), exist_ok=True)
torch.save({"model.embed_tokens.weight": None}, args.output_path)
if args.hf_input_path and args.hf_output_path:
    hf = AutoModelForCausalLM.from_pretrained(args.hf_input_path, local_files_only=True)
    state = torch.load(args.output_path)
    if args.input_tokenizer:
        LlamaTokenizer.from_pretrained(args.input_tokenizer, local_files_only=True)
    hf.load_state_dict(state)
    hf.save_pretrained(args.hf_output_path)
""",
    # convert_mixtral_nemo_to_hf.py __main__ (v2.1.0:236-247; r2.0.0rc1 :235-246): the model from
    # AutoConfig.from_pretrained(--hf_model_name), save_pretrained and the tokenizer of
    # --hf_model_name into --output_path; no torch.save.
    "convert_mixtral_nemo_to_hf.py": """
from argparse import ArgumentParser
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel
p = ArgumentParser()
p.add_argument("--input_name_or_path", required=True)
p.add_argument("--output_path", required=True)
p.add_argument("--hf_model_name", default="mistralai/Mixtral-8x7B-v0.1")
p.add_argument("--precision", default="32")
args = p.parse_args()
MegatronGPTModel.restore_from(args.input_name_or_path)
model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.hf_model_name))
model.load_state_dict({})
model.save_pretrained(args.output_path)
AutoTokenizer.from_pretrained(args.hf_model_name).save_pretrained(args.output_path)
""",
    # convert_nemotron_nemo_to_hf.py __main__ (v2.1.0:369-385; v2.0.0 :332-348): with
    # --hf_output_path, --output_path becomes <hf_output_path>/pytorch_model.bin, torch.saved
    # there (:305-306); config.json written from the .nemo (:92-130) and the SentencePiece model
    # extracted from the archive and saved as a fast tokenizer (:312-339); no save_pretrained of
    # the model.
    "convert_nemotron_nemo_to_hf.py": """
import json, os, tarfile
from argparse import ArgumentParser
import torch
from transformers import PreTrainedTokenizerFast
from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel
p = ArgumentParser()
p.add_argument("--input_name_or_path", required=True)
for a in ("--output_path", "--hf_input_path", "--hf_output_path", "--precision"):
    p.add_argument(a)
p.add_argument("--cpu-only", action="store_true")
args = p.parse_args()
if not args.hf_output_path:
    assert args.output_path is not None
else:
    args.output_path = f"{args.hf_output_path}/pytorch_model.bin"
cfg = MegatronGPTModel.restore_from(args.input_name_or_path, return_config=True)
os.makedirs(os.path.dirname(args.output_path), exist_ok=True)
torch.save({"model.embed_tokens.weight": None}, args.output_path)
if args.hf_input_path and args.hf_output_path:
    json.dump({"_name_or_path": args.hf_input_path, "model_type": "nemotron"},
              open(f"{args.hf_output_path}/config.json", "w"))
    name = cfg.tokenizer.model[5:]
    with tarfile.open(args.input_name_or_path, "r") as archive:
        archive.extract("./" + name, args.hf_output_path)
    os.rename(f"{args.hf_output_path}/{name}", f"{args.hf_output_path}/tokenizer.model")
    PreTrainedTokenizerFast().save_pretrained(args.hf_output_path)
""",
}


def nemo_config(family):
    """NEMOC_NEMO_CONFIG for a model of `family`."""
    return json.dumps(dict(NEMO_CONFIG, activation=ACTIVATION.get(family, NEMO_CONFIG["activation"])))


def write_site(root):
    """Writes STUBS under <root>/site and returns it (the PYTHONPATH)."""
    site = os.path.join(root, "site")
    for rel, text in STUBS.items():
        os.makedirs(os.path.dirname(os.path.join(site, rel)), exist_ok=True)
        with open(os.path.join(site, rel), "w") as f:
            f.write(text)
    return site


def writer(path):
    """Which stand-in wrote the file at path (a WRITERS key), or None (written by the script)."""
    with open(path, errors="replace") as f:
        head = f.read(64)
    return next((k for k, v in WRITERS.items() if head.startswith(v)), None)
