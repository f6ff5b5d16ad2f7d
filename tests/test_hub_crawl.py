"""The Hub crawl (extract/sources/hub_crawl.py) against the local stand-in (passnet_common/hub_standin.py).

Ground truth: every listed repo of :class:`extract.sources.hub_configs.Listing` knows its fault kind
and base config, so the expected status of each row is known without the crawler.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from extract.sources import hub_crawl
from extract.sources.hub_configs import Listing, graph_config_hash, load_corpus
from extract.sources.hub_crawl import classify_config, crawl, hub_catalog
from passnet_common.hub_standin import HubStandIn

SHARES = {"gated": 0.05, "private": 0.03, "no_config": 0.04, "malformed": 0.03, "remote_code": 0.04,
          "unknown_model_type": 0.03}
N = 160
PARAMS = {"limit": N, "workers": 4, "chunk": 32, "max_retries": 1, "timeout_s": 5}


def _listing():
    return Listing(N, seed=7, fault_shares=SHARES)


def _expected(listing: Listing, i: int, token_has_access: bool = False) -> str:
    r = listing.repo(i)
    f = r["fault"]
    if f == "gated" and not token_has_access:
        return "skipped:gated_no_access"
    if f == "private":
        return "skipped:private_no_access"
    if f == "no_config":
        return "skipped:no_config"
    if f == "malformed":
        return "error:malformed_json"
    status, reason, _ = classify_config(json.loads(r["config_bytes"]))
    return status + (":" + reason if reason else "")


def _table(work: Path):
    return pq.read_table(work / "hub_repos.parquet")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted crawl: (work dir, table, server request counts)."""
    work = tmp_path_factory.mktemp("ref")
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        summary = crawl(PARAMS, work / "crawl", cache_dir=work / "cache", endpoint=hub.endpoint, token=False, offline=False)
        counts = dict(hub.counts)
    return work, _table(work / "crawl"), summary, counts


def test_graph_config_hash_ignores_only_non_graph_keys():
    from extract.sources.hub_configs import model_reads

    base = dict(next(e["config"] for e in load_corpus() if not model_reads(e["config"].get("model_type"))))
    same = dict(base, _name_or_path="someone/else", transformers_version="4.99.0", eos_token_id=[1, 2])
    assert graph_config_hash(same) == graph_config_hash(base)
    # transformers builds the model in config.dtype (_from_config): a float16 fine-tune is another graph
    assert graph_config_hash(dict(base, torch_dtype="float16")) != graph_config_hash(dict(base, torch_dtype="float32"))
    labels = dict(base, id2label={"0": "A", "1": "B"})
    renamed = dict(base, id2label={"0": "x", "1": "y"})
    assert graph_config_hash(labels) == graph_config_hash(renamed)  # names do not reach the graph
    assert graph_config_hash(labels) != graph_config_hash(base)  # the number of labels does
    assert graph_config_hash(dict(base, pad_token_id=12345)) != graph_config_hash(base)  # padding_idx literal


def test_full_crawl_every_row_and_reason(reference):
    work, table, summary, counts = reference
    listing = _listing()
    rows = table.to_pylist()
    assert [r["position"] for r in rows] == list(range(N))
    assert len({r["repo_id"] for r in rows}) == N
    got = [r["status"] + (":" + r["reason"] if r["reason"] else "") for r in rows]
    assert got == [_expected(listing, i) for i in range(N)]
    for reason in ("gated_no_access", "private_no_access", "no_config", "remote_code", "unknown_model_type"):
        assert any(r["reason"] == reason and r["status"] == "skipped" for r in rows), reason
    assert any(r["reason"] == "malformed_json" and r["status"] == "error" for r in rows)
    assert all(r["model_id"] == f"hf:{r['repo_id']}@{r['sha']}" for r in rows)
    # dedupe before capture: one catalog row per distinct graph config, every ok row points at one
    cat = hub_catalog(work / "crawl")
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(cat) == summary["distinct_configs"] == len({r["graph_config_hash"] for r in ok}) < len(ok)
    ids = {c["model_id"] for c in cat}
    assert all(r["captured_as"] in ids for r in ok)
    assert all(c["source"] == "hf" and c["model_id"].startswith("hf:") for c in cat)


def test_token_with_access_unlocks_gated(tmp_path):
    listing = _listing()
    with HubStandIn(listing=listing, page_size=50, tokens_with_gated_access={"hf_ok"}) as hub:
        crawl(PARAMS, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token="hf_ok", offline=False)
    rows = _table(tmp_path / "c").to_pylist()
    got = [r["status"] + (":" + r["reason"] if r["reason"] else "") for r in rows]
    assert got == [_expected(listing, i, token_has_access=True) for i in range(N)]


class Killed(BaseException):
    """Stands for SIGKILL inside the process (BaseException: no handler of the crawler catches it)."""


def test_interrupt_and_resume_at_random_points_gives_identical_table(reference, tmp_path, monkeypatch):
    _, ref, _, _ = reference
    rng = random.Random(3)
    real_process, real_item = hub_crawl._process, hub_crawl._item_row
    work = tmp_path / "c"
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        for attempt in range(8):
            calls = {"n": 0}
            stop = rng.randrange(1, 120)

            def maybe_die(fn):
                def wrapped(*a, **k):
                    calls["n"] += 1
                    if calls["n"] == stop:
                        raise Killed()
                    return fn(*a, **k)
                return wrapped

            monkeypatch.setattr(hub_crawl, "_process", maybe_die(real_process))
            monkeypatch.setattr(hub_crawl, "_item_row", maybe_die(real_item))
            try:
                crawl(PARAMS, work, cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False, offline=False)
                break
            except Killed:
                # a kill can also cut a line in half: leave a torn tail on whichever file exists
                for name in ("results.jsonl", "listing.jsonl"):
                    p = work / name
                    if p.exists() and rng.random() < 0.5:
                        with open(p, "a") as fh:
                            fh.write('{"pos": 99999, "torn')
        else:
            monkeypatch.setattr(hub_crawl, "_process", real_process)
            monkeypatch.setattr(hub_crawl, "_item_row", real_item)
            crawl(PARAMS, work, cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False, offline=False)
    assert attempt > 0  # at least one interruption happened
    assert _table(work).equals(ref), _diff(_table(work), ref)


def test_429_storm_and_5xx_recover(reference, tmp_path):
    _, ref, _, _ = reference
    listing = _listing()
    with HubStandIn(listing=listing, page_size=50) as hub:
        hub.faults.storm_429 = 12
        hub.faults.retry_after = 0
        ok_ids = [listing.repo(i, with_config=False)["id"] for i in range(N) if listing.repo(i, with_config=False)["fault"] is None]
        for rid in ok_ids[:3]:
            hub.faults.fail_5xx[rid] = 2
        crawl(PARAMS, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False, offline=False)
        assert hub.counts["429"] == 12 and hub.counts["503"] == 6
    assert _table(tmp_path / "c").equals(ref)


def test_slow_repo_becomes_timeout_error_row(tmp_path):
    listing = _listing()
    victim = next(i for i in range(N) if listing.repo(i, with_config=False)["fault"] is None)
    with HubStandIn(listing=listing, page_size=50) as hub:
        hub.faults.slow[listing.repo(victim, with_config=False)["id"]] = 3
        crawl(dict(PARAMS, timeout_s=0.5, max_retries=1), tmp_path / "c", cache_dir=tmp_path / "cache",
              endpoint=hub.endpoint, token=False, offline=False)
    rows = _table(tmp_path / "c").to_pylist()
    assert (rows[victim]["status"], rows[victim]["reason"]) == ("error", "timeout")
    others = [r["status"] + (":" + r["reason"] if r["reason"] else "") for i, r in enumerate(rows) if i != victim]
    assert others == [_expected(listing, i) for i in range(N) if i != victim]


def test_broken_listing_page_restarts_listing(reference, tmp_path):
    _, ref, _, _ = reference
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        hub.faults.bad_page_once.add(100)
        crawl(PARAMS, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False, offline=False)
    assert _table(tmp_path / "c").equals(ref)


def test_offline_crawl_from_cache_alone(reference, tmp_path):
    work, ref, _, _ = reference
    shutil.copytree(work / "crawl", tmp_path / "c")
    (tmp_path / "c" / "results.jsonl").unlink()
    (tmp_path / "c" / "hub_repos.parquet").unlink()
    # no server at all: every answer must come from the stored listing and the Hub cache
    crawl(PARAMS, tmp_path / "c", cache_dir=work / "cache", endpoint="http://127.0.0.1:9", token=False, offline=True)
    got, want = _table(tmp_path / "c").to_pylist(), ref.to_pylist()
    assert len(got) == len(want) == N
    for g, w in zip(got, want):
        if w["reason"] in (None, "malformed_json", "remote_code", "unknown_model_type", "unknown_architecture"):
            assert g == w  # decided from the cached file: identical row
        else:  # the Hub's answer (gated, private, missing) is not in the cache: the listing already knew it
            assert w["reason"] in ("gated_no_access", "private_no_access", "no_config")
            assert (g["status"], g["reason"]) == (w["status"], w["reason"]), (g, w)
            assert "reason from the listing" in g["message"]


def test_offline_without_listing_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="offline crawl needs a complete stored listing"):
        crawl(PARAMS, tmp_path / "c", offline=True)


def test_unknown_param_key_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown key"):
        crawl({"limt": 3}, tmp_path)


@pytest.mark.slow
def test_sigkill_subprocess_and_resume(reference, tmp_path):
    """A real SIGKILL of `python -m extract crawl` at random moments, then a clean finish."""
    _, ref, _, _ = reference
    rng = random.Random(11)
    params = tmp_path / "params.yaml"
    params.write_text("hub:\n" + "".join(f"  {k}: {v}\n" for k, v in PARAMS.items()))
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        cmd = [sys.executable, "-m", "extract", "crawl", "--params", str(params), "--work", str(tmp_path / "c"),
               "--cache", str(tmp_path / "cache"), "--endpoint", hub.endpoint]
        env = dict(os.environ, HF_HUB_OFFLINE="0")
        env.pop("HF_TOKEN", None)
        for _ in range(3):
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(2, 15))
            p.send_signal(signal.SIGKILL)
            p.wait()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
    assert _table(tmp_path / "c").equals(ref)


def _diff(a, b):
    ra, rb = a.to_pylist(), b.to_pylist()
    return [{k: (x[k], y[k]) for k in x if x[k] != y[k]} for x, y in zip(ra, rb) if x != y][:3], len(ra), len(rb)


def test_crawl_cli_is_online_without_offline_env(tmp_path):
    """`python -m extract crawl` talks to the Hub when neither HF_HUB_OFFLINE nor
    TRANSFORMERS_OFFLINE is set by the user (huggingface_hub reads TRANSFORMERS_OFFLINE as
    HF_HUB_OFFLINE, so the CLI must not set it for the Hub commands)."""
    params = tmp_path / "params.yaml"
    params.write_text("hub:\n  limit: 12\n  workers: 2\n  chunk: 8\n")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN")}
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        p = subprocess.run([sys.executable, "-m", "extract", "crawl", "--params", str(params), "--work",
                            str(tmp_path / "c"), "--cache", str(tmp_path / "cache"), "--endpoint", hub.endpoint],
                           env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    assert _table(tmp_path / "c").num_rows == 12


FAST_BACKOFF = dict(PARAMS, backoff_s=0.002, backoff_max_s=0.01)


def _status(rows):
    return [r["status"] + (":" + r["reason"] if r["reason"] else "") for r in rows]


def _listing_then(fault):
    """Run the real listing step, then inject ``fault(hub)`` before the downloads start."""
    real = hub_crawl._list

    def wrapped(*a, **k):
        n = real(*a, **k)
        fault()
        return n
    return wrapped


def test_429_storm_is_http_429_and_retried_next_run(reference, tmp_path, monkeypatch):
    _, ref, _, _ = reference
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        def storm():
            hub.faults.storm_429, hub.faults.retry_after = 200, 0
        monkeypatch.setattr(hub_crawl, "_list", _listing_then(storm))
        crawl(FAST_BACKOFF, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False,
              offline=False)
        assert hub.counts["429"] == 200
        rows = _table(tmp_path / "c").to_pylist()
        got = _status(rows)
        assert "error:http_429" in got and "error:not_in_cache" not in got  # classed by the HTTP status
        assert all(("429" in r["message"]) for r in rows if r["reason"] == "http_429")
        monkeypatch.undo()
        crawl(FAST_BACKOFF, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False,
              offline=False)  # the storm is over: the next run retries the http_429 rows
    assert _table(tmp_path / "c").equals(ref), _diff(_table(tmp_path / "c"), ref)


def test_persistent_5xx_is_http_5xx_and_retried_next_run(reference, tmp_path):
    _, ref, _, _ = reference
    listing = _listing()
    ok = [i for i in range(N) if listing.repo(i, with_config=False)["fault"] is None][:2]
    with HubStandIn(listing=listing, page_size=50) as hub:
        for i in ok:
            hub.faults.fail_5xx[listing.repo(i, with_config=False)["id"]] = 10 ** 6
        crawl(FAST_BACKOFF, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False,
              offline=False)
        rows = _table(tmp_path / "c").to_pylist()
        assert [(rows[i]["status"], rows[i]["reason"]) for i in ok] == [("error", "http_5xx")] * 2
        assert all("503" in rows[i]["message"] for i in ok)
        hub.faults.fail_5xx.clear()
        crawl(FAST_BACKOFF, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False,
              offline=False)
    assert _table(tmp_path / "c").equals(ref), _diff(_table(tmp_path / "c"), ref)


def test_backoff_is_shared_and_resets():
    b = hub_crawl.Backoff(base_s=0.5, max_s=2.0)
    t0 = time.monotonic()
    b.hit()
    b.hit()
    assert b.streak == 2 and 0.9 <= b.until - t0 <= 1.1  # 0.5 then 1.0: the later pause wins
    b.hit(retry_after_s=30)
    assert b.until - t0 <= 2.1  # capped at max_s
    b.ok()
    assert b.streak == 0


def test_listing_cursor_loop_and_repeated_page_resume_from_last_good_cursor(reference, tmp_path):
    _, ref, _, _ = reference
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        hub.faults.loop_next[100] = 1  # page at cursor 100 links back to the first page once
        hub.faults.repeat_page[50] = 1  # page at cursor 50 serves the first page's items once
        crawl(PARAMS, tmp_path / "c", cache_dir=tmp_path / "cache", endpoint=hub.endpoint, token=False, offline=False)
    rows = _table(tmp_path / "c").to_pylist()
    assert len({r["repo_id"] for r in rows}) == len(rows) == N
    assert _table(tmp_path / "c").equals(ref)


def test_persistent_cursor_loop_is_an_error_not_a_short_listing(tmp_path):
    with HubStandIn(listing=_listing(), page_size=50) as hub:
        hub.faults.loop_next[100] = 10 ** 6
        with pytest.raises(hub_crawl.ListingLoop, match="row 150"):
            crawl(dict(PARAMS, listing_restarts=2), tmp_path / "c", cache_dir=tmp_path / "cache",
                  endpoint=hub.endpoint, token=False, offline=False)
    assert not (tmp_path / "c" / "listing.done").exists()
    lines = (tmp_path / "c" / "listing.jsonl").read_text().splitlines()
    assert len(lines) == 150 and len({json.loads(x)["repo_id"] for x in lines}) == 150


def test_stalled_download_hits_the_wall_clock_limit(tmp_path):
    listing = _listing()
    victim = next(i for i in range(N) if listing.repo(i, with_config=False)["fault"] is None)
    with HubStandIn(listing=listing, page_size=50) as hub:
        hub.faults.drip[listing.repo(victim, with_config=False)["id"]] = 0.2  # below the 5 s read timeout
        crawl(dict(PARAMS, download_wall_s=1.5, max_retries=0), tmp_path / "c", cache_dir=tmp_path / "cache",
              endpoint=hub.endpoint, token=False, offline=False)
    rows = _table(tmp_path / "c").to_pylist()
    assert (rows[victim]["status"], rows[victim]["reason"]) == ("error", "timeout")
    assert "wall clock" in rows[victim]["message"]


def _tiny_clip_text(eos: int):
    from transformers import CLIPTextConfig

    return CLIPTextConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                          num_attention_heads=2, max_position_embeddings=16, eos_token_id=eos, pad_token_id=1,
                          bos_token_id=0)


def test_config_reads_recorder_sees_what_clip_text_forward_reads():
    import torch
    from transformers import CLIPTextModel

    from extract.capture.config_reads import recorded_reads
    from extract.sources.hub_configs import CAPTURE_DECIDED, IGNORED_KEYS, model_reads

    cfg = _tiny_clip_text(5)
    with recorded_reads(cfg) as reads:
        model = CLIPTextModel(cfg).eval()
        model(input_ids=torch.tensor([[0, 7, 5, 9]]))
    assert type(cfg).__name__ == "CLIPTextConfig" and not getattr(type(cfg), "_Recording", False)  # restored
    assert {"eos_token_id", "hidden_size", "vocab_size"} <= reads
    # every ignored key the model really reads is kept by the dedupe key's static scan
    assert (reads & IGNORED_KEYS) - CAPTURE_DECIDED <= model_reads("clip_text_model")
    with pytest.raises(TypeError, match="PretrainedConfig"):
        with recorded_reads({"eos_token_id": 2}):
            pass


def test_clip_eos_token_id_changes_the_graph_and_the_key():
    """CLIP's text forward pools at argmax(input_ids) when eos_token_id == 2 (the legacy value the
    real clip-vit-large-patch14 checkpoint ships), else at the first eos position: two graphs."""
    import torch
    from transformers import CLIPTextModel

    ids = torch.tensor([[0, 7, 5, 9, 3]])  # argmax at position 3, first 5 at position 2
    outs = []
    for eos in (2, 5):
        torch.manual_seed(0)
        outs.append(CLIPTextModel(_tiny_clip_text(eos)).eval()(input_ids=ids).pooler_output)
    assert not torch.allclose(outs[0], outs[1])  # the forward differs
    real = {"model_type": "clip", "architectures": ["CLIPModel"], "projection_dim": 768,
            "text_config": {"model_type": "clip_text_model", "eos_token_id": 2, "hidden_size": 768, "vocab_size": 49408},
            "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "patch_size": 14}}
    fixed = json.loads(json.dumps(real))
    fixed["text_config"]["eos_token_id"] = 49407
    assert graph_config_hash(real) != graph_config_hash(fixed)
    assert graph_config_hash(dict(_tiny_clip_text(2).to_dict())) != graph_config_hash(_tiny_clip_text(49407).to_dict())
    # a model type whose code never reads eos_token_id still dedupes on it
    bert = {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 32, "eos_token_id": 2}
    assert graph_config_hash(bert) == graph_config_hash(dict(bert, eos_token_id=[2, 3]))
