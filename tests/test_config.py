"""Typed params configs (passnet_common.config): the schema is derived from the fields, defaults fill
what params.yaml leaves out, and a bad value is an error naming its key path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from passnet_common.config import CONFIGS, ParamsConfig, knob, register
from passnet_common.params import BLOCKS, load_params
from passnet_common.spec import ParamsError, positive


@dataclass(frozen=True)
class Inner(ParamsConfig):
    trials: int = knob(30, rule=positive(int), doc="timed trials")
    gate: Literal["iqr", "ci"] = "iqr"
    cap_s: float | None = None


@dataclass(frozen=True)
class Item(ParamsConfig):
    name: str = knob(doc="required")
    weight: float = 1.0


@dataclass(frozen=True)
class Outer(ParamsConfig):
    inner: Inner = knob(factory=Inner)
    sizes: list[int] = knob(factory=lambda: [1, 8])
    items: list[Item] = knob(factory=list)
    extra: dict[str, str] = knob(factory=dict)


def test_defaults_fill_what_the_block_leaves_out() -> None:
    cfg = Outer.from_params({"inner": {"gate": "ci"}}, "outer")
    assert cfg.inner == Inner(trials=30, gate="ci", cap_s=None)
    assert cfg.sizes == [1, 8] and cfg.items == [] and cfg.extra == {}
    assert Outer.from_params(None, "outer") == Outer()


def test_nested_and_listed_configs_are_built() -> None:
    cfg = Outer.from_params({"items": [{"name": "a"}, {"name": "b", "weight": 2}]}, "outer")
    assert cfg.items == [Item("a", 1.0), Item("b", 2)]
    assert cfg.to_params()["items"] == [{"name": "a", "weight": 1.0}, {"name": "b", "weight": 2}]
    assert Outer.from_params(cfg.to_params(), "outer") == cfg


@pytest.mark.parametrize("value,message", [
    ({"inner": {"trails": 3}}, "outer.inner.trails: unknown key"),
    ({"inner": {"trials": 0}}, "outer.inner.trials: expected positive int, got 0"),
    ({"inner": {"gate": "wide"}}, "outer.inner.gate: expected one of 'iqr', 'ci'"),
    ({"inner": {"cap_s": "ten"}}, "outer.inner.cap_s: expected number or null"),
    ({"sizes": [1, "8"]}, "outer.sizes[1]: expected int"),
    ({"items": [{"weight": 2}]}, "outer.items[0]: missing required key(s) ['name']"),
    ({"extra": {"a": 1}}, "outer.extra.a: expected str"),
])
def test_a_bad_value_names_its_key_path(value: dict, message: str) -> None:
    with pytest.raises(ParamsError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)")):
        Outer.from_params(value, "outer")


def test_register_puts_the_derived_schema_where_load_params_checks_it(tmp_path) -> None:
    register("test_outer_block", Outer)
    try:
        assert CONFIGS["test_outer_block"] is Outer
        bad = tmp_path / "params.yaml"
        bad.write_text("test_outer_block:\n  inner:\n    trials: -1\n")
        with pytest.raises(ParamsError, match="test_outer_block.inner.trials"):
            load_params(bad)
    finally:
        BLOCKS.pop("test_outer_block", None)
        CONFIGS.pop("test_outer_block", None)


def test_docs_lists_every_knob_with_its_default() -> None:
    rows = {name: default for name, default, _ in Outer.docs()}
    assert rows["inner.trials"] == 30 and rows["inner.gate"] == "iqr" and rows["sizes"] == [1, 8]


def test_every_params_block_is_a_family_config() -> None:
    """Every top-level block of the committed params.yaml is a typed config registered by a family that
    the check_params stage names, and builds from the committed values (one home per knob)."""
    import importlib
    import shlex
    from pathlib import Path

    import yaml

    import passnet_common.summary  # noqa: F401  (the core's own block)

    root = Path(__file__).resolve().parents[1]
    cmd = shlex.split(yaml.safe_load((root / "dvc.yaml").read_text())["stages"]["check_params"]["cmd"])
    families = cmd[cmd.index("--families") + 1:cmd.index("--out")]
    for family in families:
        importlib.import_module(f"{family}.config")
    params = yaml.safe_load((root / "params.yaml").read_text())
    assert set(params) <= set(CONFIGS), f"blocks without a config: {sorted(set(params) - set(CONFIGS))}"
    for name, block in params.items():
        CONFIGS[name].from_params(block, name)
