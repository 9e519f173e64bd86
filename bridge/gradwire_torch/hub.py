"""Bundled Hugging Face Hub configurations: `transformers:ORG/NAME` without a network.

`gradwire model export transformers:meta-llama/Llama-3.1-8B` builds the model
from the fields of that repository's public config.json written here (the
architecture and its sizes, nothing else: no weights, no tokenizer), so that
nobody has to give them with --set one by one. Each entry names the config.json
it was written from. The parameter counts they give with transformers are in
docs/models.md ("Models from the Hugging Face Hub") and checked by the
torch.hub.* tests.

A short legacy id (gpt2, bert-base-uncased, t5-small) is an alias of the
organisation's id. An id that is not here gets the nearest bundled ids and
class names as "did you mean" (suggest()). Pure Python: no torch, so that
these lookups and their tests need no PyTorch environment.
"""
from __future__ import annotations

import difflib

HUB = "https://huggingface.co/{}/blob/main/config.json"


def _llama(hidden, intermediate, layers, heads, kv_heads, vocab, positions, rope_theta, **extra):
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
            "hidden_size": hidden, "intermediate_size": intermediate, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv_heads, "vocab_size": vocab,
            "max_position_embeddings": positions, "rms_norm_eps": 1e-05, "rope_theta": rope_theta,
            "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, **extra}


_LLAMA31_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                 "original_max_position_embeddings": 8192}


def _qwen2(hidden, intermediate, layers, heads, kv_heads, vocab, positions, tie):
    return {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
            "hidden_size": hidden, "intermediate_size": intermediate, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv_heads, "vocab_size": vocab,
            "max_position_embeddings": positions, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
            "tie_word_embeddings": tie, "use_sliding_window": False}


def _gpt2(n_embd, n_layer, n_head):
    return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": n_embd, "n_layer": n_layer,
            "n_head": n_head, "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024,
            "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05, "tie_word_embeddings": True}


def _bert(hidden, layers, heads, intermediate):
    return {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": hidden,
            "num_hidden_layers": layers, "num_attention_heads": heads, "intermediate_size": intermediate,
            "hidden_act": "gelu", "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2,
            "layer_norm_eps": 1e-12, "tie_word_embeddings": True}


def _t5(d_model, d_ff, layers, heads):
    return {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "d_model": d_model,
            "d_ff": d_ff, "d_kv": 64, "num_layers": layers, "num_decoder_layers": layers, "num_heads": heads,
            "vocab_size": 32128, "n_positions": 512, "relative_attention_num_buckets": 32,
            "feed_forward_proj": "relu", "layer_norm_epsilon": 1e-06, "tie_word_embeddings": True}


def _vit(hidden, layers, heads, intermediate):
    return {"architectures": ["ViTForImageClassification"], "model_type": "vit", "hidden_size": hidden,
            "num_hidden_layers": layers, "num_attention_heads": heads, "intermediate_size": intermediate,
            "hidden_act": "gelu", "image_size": 224, "patch_size": 16, "num_channels": 3, "qkv_bias": True,
            "layer_norm_eps": 1e-12, "num_labels": 1000}  # config.json lists the 1000 ImageNet labels (id2label)


# repository id -> the fields of its config.json that shape the model.
CONFIGS: dict[str, dict] = {
    "meta-llama/Llama-2-7b-hf": _llama(4096, 11008, 32, 32, 32, 32000, 4096, 10000.0),
    "meta-llama/Llama-2-13b-hf": _llama(5120, 13824, 40, 40, 40, 32000, 4096, 10000.0),
    "meta-llama/Llama-2-70b-hf": _llama(8192, 28672, 80, 64, 8, 32000, 4096, 10000.0),
    "meta-llama/Meta-Llama-3-8B": _llama(4096, 14336, 32, 32, 8, 128256, 8192, 500000.0),
    "meta-llama/Meta-Llama-3-70B": _llama(8192, 28672, 80, 64, 8, 128256, 8192, 500000.0),
    "meta-llama/Llama-3.1-8B": _llama(4096, 14336, 32, 32, 8, 128256, 131072, 500000.0,
                                      rope_scaling=_LLAMA31_ROPE),
    "meta-llama/Llama-3.1-70B": _llama(8192, 28672, 80, 64, 8, 128256, 131072, 500000.0,
                                       rope_scaling=_LLAMA31_ROPE),
    "mistralai/Mistral-7B-v0.1": {
        "architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_act": "silu",
        "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768,
        "sliding_window": 4096, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": False},
    "Qwen/Qwen2.5-0.5B": _qwen2(896, 4864, 24, 14, 2, 151936, 32768, tie=True),
    "Qwen/Qwen2.5-7B": _qwen2(3584, 18944, 28, 28, 4, 152064, 131072, tie=False),
    "openai-community/gpt2": _gpt2(768, 12, 12),
    "openai-community/gpt2-medium": _gpt2(1024, 24, 16),
    "openai-community/gpt2-large": _gpt2(1280, 36, 20),
    "openai-community/gpt2-xl": _gpt2(1600, 48, 25),
    "google-bert/bert-base-uncased": _bert(768, 12, 12, 3072),
    "google-bert/bert-large-uncased": _bert(1024, 24, 16, 4096),
    "google-t5/t5-small": _t5(512, 2048, 6, 8),
    "google-t5/t5-base": _t5(768, 3072, 12, 12),
    "google-t5/t5-large": _t5(1024, 4096, 24, 16),
    "google/vit-base-patch16-224": _vit(768, 12, 12, 3072),
    "google/vit-large-patch16-224": _vit(1024, 24, 16, 4096),
}

# Short ids the hub redirects to the organisation's repository.
ALIASES = {
    "gpt2": "openai-community/gpt2", "gpt2-medium": "openai-community/gpt2-medium",
    "gpt2-large": "openai-community/gpt2-large", "gpt2-xl": "openai-community/gpt2-xl",
    "bert-base-uncased": "google-bert/bert-base-uncased", "bert-large-uncased": "google-bert/bert-large-uncased",
    "t5-small": "google-t5/t5-small", "t5-base": "google-t5/t5-base", "t5-large": "google-t5/t5-large",
    "meta-llama/Meta-Llama-3.1-8B": "meta-llama/Llama-3.1-8B",
    "meta-llama/Meta-Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
}


def url(repo: str) -> str:
    """The config.json an entry was written from."""
    return HUB.format(repo)


def lookup(name: str) -> tuple[str, dict] | None:
    """(repository id, config fields) for a bundled id or alias, else None."""
    repo = ALIASES.get(name, name)
    fields = CONFIGS.get(repo)
    return (repo, dict(fields)) if fields is not None else None


def looks_like_hub_id(name: str) -> bool:
    """ORG/NAME (a class name never has a slash) or a known alias."""
    return "/" in name or name in ALIASES


def suggest(word: str, candidates, n: int = 3) -> str:
    """' (did you mean X, Y?)' for the nearest candidates (case ignored), or ''."""
    cands = list(dict.fromkeys(candidates))
    lower = {c.lower(): c for c in cands}
    near = difflib.get_close_matches(word.lower(), list(lower), n=n, cutoff=0.6)
    if not near:  # a different organisation, the right name: compare the part after the slash
        tail = {c.rpartition("/")[2].lower(): c for c in cands}
        near = difflib.get_close_matches(word.rpartition("/")[2].lower(), list(tail), n=n, cutoff=0.6)
        return f" (did you mean {', '.join(tail[m] for m in near)}?)" if near else ""
    return f" (did you mean {', '.join(lower[m] for m in near)}?)"


def bundled_ids() -> list[str]:
    return list(CONFIGS) + list(ALIASES)
