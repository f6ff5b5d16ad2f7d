"""Shared test setup: fully offline, deterministic, tiny real-architecture configs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw a fixed pseudo-random sample (the same on every run and machine), so a
# run's verdict does not depend on luck; HYPOTHESIS_EXPLORE=1 draws fresh examples to hunt for
# new counterexamples (a found one becomes a pinned test).
settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("explore" if os.environ.get("HYPOTHESIS_EXPLORE") else "fixed")

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Tiny configs of real transformers architectures (built from config.json alone).
TINY_CONFIGS = {
    "tiny-llama": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 128, "hidden_size": 32,
        "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "max_position_embeddings": 64,
    },
    "tiny-bert": {
        "model_type": "bert", "architectures": ["BertModel"], "vocab_size": 100, "hidden_size": 32,
        "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 64,
    },
    "tiny-gpt2": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 100, "n_embd": 32, "n_layer": 2,
        "n_head": 4, "n_positions": 64,
    },
}


def write_config_folder(folder: Path, configs: dict[str, dict]) -> Path:
    """Lay out ``configs`` as ``<folder>/<name>/config.json`` (a Hub-cache-like folder)."""
    for name, cfg in configs.items():
        d = folder / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.fixture
def tiny_config_dir(tmp_path: Path) -> Path:
    return write_config_folder(tmp_path / "configs", TINY_CONFIGS)
