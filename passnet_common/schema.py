"""Every table of the pipeline, declared once.

Stages build rows as plain dicts and call :func:`to_table` with the table's name; the
schema (column types, nullability) and the schema version live only here. The version is
stored in each Parquet file's key-value metadata under ``passnet.schema_version`` and the
table name under ``passnet.table``.

Identifiers (the data contract, docs/tables.md): ``model_id`` is source-prefixed and pinned
(``transformers:LlamaForCausalLM``, ``timm:resnet50``, ``torchvision:resnet18``,
``local:<path-hash>``, ``hf:org/name@<sha>``); ``graph_hash`` is the sha256 hex of the
canonical form of :mod:`passnet_common.canonical` and is only comparable between rows with the
same ``canonical_version``.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import pyarrow as pa

SCHEMA_VERSION = 1

_shape = pa.list_(pa.int64())

SCHEMAS: dict[str, pa.Schema] = {
    # One row per catalog entry (a model to capture).
    "models": pa.schema(
        [
            pa.field("model_id", pa.string(), nullable=False),
            pa.field("source", pa.string(), nullable=False),  # transformers | timm | torchvision | local | hf
            pa.field("name", pa.string(), nullable=False),
            pa.field("architecture", pa.string()),  # class name, e.g. LlamaForCausalLM
            pa.field("model_type", pa.string()),  # transformers config model_type
            pa.field("task", pa.string()),  # auto mapping, e.g. causal-lm, base, image-classification
            pa.field("modality", pa.string()),  # text | vision | audio | multimodal | video
            pa.field("config_json", pa.string()),  # canonical JSON of the config the model is built from
            pa.field("config_hash", pa.string(), nullable=False),
            pa.field("library", pa.string(), nullable=False),
            pa.field("library_version", pa.string(), nullable=False),
            pa.field("trust_remote_code", pa.bool_(), nullable=False),
            pa.field("catalog_error_class", pa.string()),  # the config could not be read: json | no_model_type | unknown_model_type | not_a_config  # noqa: E501
            pa.field("catalog_error", pa.string()),  # message naming the file
            pa.field("catalog_note", pa.string()),  # repairs/inferences made, e.g. model_type inferred from architectures
            pa.field("duplicate_of", pa.string()),  # same graph config as this model_id: captured once (extract/sources/catalog.py)
        ]
    ),
    # One row per capture attempt (model x config x library versions).
    "extractions": pa.schema(
        [
            pa.field("model_id", pa.string(), nullable=False),
            pa.field("attempt_key", pa.string(), nullable=False),
            pa.field("config_hash", pa.string(), nullable=False),
            pa.field("status", pa.string(), nullable=False),  # ok | incomplete (graphs kept, see complete) | failed | skipped
            pa.field("error_class", pa.string()),  # timeout | oom | crash | exception:<Type> | trust_remote_code | unsupported
            pa.field("error_message", pa.string()),
            pa.field("mode", pa.string()),  # meta | real | real_reduced
            pa.field("fallback_reason", pa.string()),
            pa.field("num_graphs", pa.int32()),
            pa.field("num_graph_breaks", pa.int32()),
            pa.field("input_spec_json", pa.string()),
            pa.field("param_count", pa.int64()),  # parameters of the model as built (true config unless reduced)
            pa.field("torch_version", pa.string(), nullable=False),
            pa.field("library_version", pa.string(), nullable=False),
            pa.field("canonical_version", pa.int32(), nullable=False),
            pa.field("complete", pa.bool_(), nullable=False),  # every frame became a graph (Dynamo's frame counters)
            pa.field("incomplete_reason", pa.string()),  # recompile limit hit, eager/skipped frames, output mismatch
            pa.field("eager_frames", pa.int32(), nullable=False),  # frames Dynamo saw but ran eagerly
            pa.field("recompile_limit_hits", pa.int32(), nullable=False),
            pa.field("output_mismatches", pa.int32(), nullable=False),  # graphs whose recorded outputs differ from execution (real mode)
            pa.field("dynamo_json", pa.string()),  # Dynamo settings of the capture (also in the attempt key)
            pa.field("code_hash", pa.string(), nullable=False),  # content hash of the capture code (extract.runs.attempts.CODE_GLOBS)
        ]
    ),
    # One row per captured graph instance (a model may give several through graph breaks).
    "graphs": pa.schema(
        [
            pa.field("model_id", pa.string(), nullable=False),
            pa.field("graph_index", pa.int32(), nullable=False),
            pa.field("graph_hash", pa.string(), nullable=False),
            pa.field("structure_hash", pa.string(), nullable=False),
            pa.field("wl_hash", pa.string(), nullable=False),
            pa.field("canonical_version", pa.int32(), nullable=False),
            pa.field("num_nodes", pa.int32(), nullable=False),
            pa.field("num_ops", pa.int32(), nullable=False),  # call_* nodes
            pa.field("num_inputs", pa.int32(), nullable=False),  # placeholders that are real inputs
            pa.field("num_params", pa.int32(), nullable=False),  # placeholders that are parameters/buffers
            pa.field("param_bytes", pa.int64(), nullable=False),
            pa.field("break_reason", pa.string()),  # why Dynamo ended this graph (null: end of frame)
            pa.field("output_mismatch", pa.string()),  # recorded vs executed output shape/dtype (real mode)
        ]
    ),
    # One row per FX node of each unique graph, in canonical order.
    "nodes": pa.schema(
        [
            pa.field("graph_hash", pa.string(), nullable=False),
            pa.field("node_index", pa.int32(), nullable=False),
            pa.field("op", pa.string(), nullable=False),  # placeholder | get_attr | call_function | call_method | call_module | output
            pa.field("target", pa.string(), nullable=False),
            pa.field("placeholder_kind", pa.string()),  # input | parameter | buffer (placeholders only)
            pa.field("input_nodes", pa.list_(pa.int32()), nullable=False),
            pa.field("in_shapes", pa.list_(_shape), nullable=False),
            pa.field("in_dtypes", pa.list_(pa.string()), nullable=False),
            pa.field("out_shapes", pa.list_(_shape), nullable=False),
            pa.field("out_dtypes", pa.list_(pa.string()), nullable=False),
            pa.field("literal_args", pa.string()),  # JSON of the non-node arguments
        ]
    ),
    # One row per distinct graph_hash.
    "unique_graphs": pa.schema(
        [
            pa.field("graph_hash", pa.string(), nullable=False),
            pa.field("structure_hash", pa.string(), nullable=False),
            pa.field("wl_hash", pa.string(), nullable=False),
            pa.field("canonical_version", pa.int32(), nullable=False),
            pa.field("num_nodes", pa.int32(), nullable=False),
            pa.field("num_instances", pa.int32(), nullable=False),
            pa.field("num_models", pa.int32(), nullable=False),
            pa.field(
                "members",
                pa.list_(pa.struct([pa.field("model_id", pa.string()), pa.field("graph_index", pa.int32())])),
                nullable=False,
            ),
            pa.field("store_path", pa.string(), nullable=False),
        ]
    ),
    # --- proxy tables ---
    # One row per (calibration category, MoE block, routed expert): proxy_artifacts.stats.
    "expert_stats": pa.schema(
        [
            pa.field("model_id", pa.string(), nullable=False),
            pa.field("category", pa.string(), nullable=False),
            pa.field("block", pa.string(), nullable=False),  # module path of the MoE block
            pa.field("layer", pa.int32(), nullable=False),
            pa.field("expert", pa.int32(), nullable=False),
            pa.field("tokens", pa.int64(), nullable=False),  # calibration tokens seen by the block
            pa.field("count", pa.int64(), nullable=False),  # tokens routed to the expert (top-k)
            pa.field("frequency", pa.float64(), nullable=False),  # count / tokens
            pa.field("prob_mass", pa.float64(), nullable=False),  # mean router probability
            pa.field("ean", pa.float64(), nullable=False),  # mean ||f_j(x)|| on routed tokens
            pa.field("reap", pa.float64(), nullable=False),  # mean g_j(x)*||f_j(x)|| on routed tokens
            pa.field("stats_version", pa.int32(), nullable=False),
        ]
    ),
    # One row per (proxy, MoE block, original expert): cluster label and kept flag.
    "expert_clusters": pa.schema(
        [
            pa.field("block", pa.string(), nullable=False),
            pa.field("layer", pa.int32(), nullable=False),
            pa.field("expert", pa.int32(), nullable=False),
            pa.field("cluster", pa.int32(), nullable=False),
            pa.field("kept", pa.bool_(), nullable=False),
            pa.field("new_index", pa.int32()),  # index in the proxy (null: pruned)
            pa.field("method", pa.string(), nullable=False),
            pa.field("keep_ratio", pa.float64(), nullable=False),
            pa.field("frequency", pa.float64(), nullable=False),
        ]
    ),
    # One row per evaluated proxy (selection method x keep ratio x seed).
    "proxies": pa.schema(
        [
            pa.field("base_model_id", pa.string(), nullable=False),
            pa.field("method", pa.string(), nullable=False),  # a name of proxy.compare.methods
            pa.field("keep_ratio", pa.float64(), nullable=False),
            pa.field("seed", pa.int32(), nullable=False),
            pa.field("experts_base", pa.int32(), nullable=False),
            pa.field("experts_kept", pa.int32(), nullable=False),
            pa.field("params_base", pa.int64(), nullable=False),
            pa.field("params_proxy", pa.int64(), nullable=False),
            pa.field("bytes_base", pa.int64(), nullable=False),
            pa.field("bytes_proxy", pa.int64(), nullable=False),
            pa.field("heldout_loss_base", pa.float64(), nullable=False),
            pa.field("heldout_loss_proxy", pa.float64(), nullable=False),
            pa.field("next_token_acc_base", pa.float64(), nullable=False),
            pa.field("next_token_acc_proxy", pa.float64(), nullable=False),
            pa.field("kl_base_to_proxy", pa.float64(), nullable=False),
            pa.field("routing_entropy_base", pa.float64(), nullable=False),
            pa.field("routing_entropy_proxy", pa.float64(), nullable=False),
            pa.field("task_acc_base", pa.float64()),
            pa.field("task_acc_proxy", pa.float64()),
            pa.field("stats_sha256", pa.string(), nullable=False),
        ]
    ),
    # --- score tables (curate.score.evaluate / curate.score.scoring) ---
    # One row per candidate x subgraph: what the scorer needs to recompute S_t / ES_t.
    "score_samples": pa.schema(
        [
            pa.field("candidate", pa.string(), nullable=False),
            pa.field("candidate_spec", pa.string(), nullable=False),  # eager | backend:<name> | module:<file> | pass:<file>
            pa.field("task_id", pa.string(), nullable=False),
            pa.field("subgraph_id", pa.string(), nullable=False),
            pa.field("status", pa.string(), nullable=False),  # ok | compile_failure | runtime_crash | violation | excluded
            pa.field("error_code", pa.int32()),  # null | 1 accuracy (violations) | 2 runtime crash | 3 compile failure
            pa.field("error_message", pa.string()),
            pa.field("speedup", pa.float64()),  # median(eager ms) / median(candidate ms)
            pa.field("speedup_first", pa.float64()),  # before a re-time in a fresh process
            pa.field("retimed", pa.bool_(), nullable=False),
            pa.field("eager_ms", pa.float64()),  # median per call
            pa.field("candidate_ms", pa.float64()),
            pa.field("stable", pa.bool_()),  # IQR/median gate passed
            pa.field("compile_s", pa.float64()),
            pa.field("matches", pa.int32()),  # pass candidates: pattern replacements made
            pa.field("min_pass_t", pa.int32()),  # smallest tolerance level the sample passes (null: none)
            pa.field("fresh_min_pass_t", pa.int32()),  # the same on fresh (new-seed) inputs
            pa.field("out_dtypes", pa.list_(pa.string())),
            pa.field("out_min_pass_t", pa.list_(pa.int32())),
            pa.field("out_max_abs_diff", pa.list_(pa.float64())),
            pa.field("out_trivial", pa.list_(pa.string())),  # null | constant | near_zero | empty (reference)
            pa.field("violations", pa.list_(pa.string()), nullable=False),
            pa.field("flags", pa.list_(pa.string())),  # no_match ...
            pa.field("scored", pa.bool_(), nullable=False),  # false: excluded (trivial reference)
            pa.field("code_version", pa.int32(), nullable=False),
        ]
    ),
    # One row per candidate x convention x scope (set | task | task_mean) x tolerance level t.
    "scores": pa.schema(
        [
            pa.field("candidate", pa.string(), nullable=False),
            pa.field("convention", pa.string(), nullable=False),  # paper | graphnet
            pa.field("p", pa.float64(), nullable=False),
            pa.field("b", pa.float64(), nullable=False),
            pa.field("scope", pa.string(), nullable=False),
            pa.field("task_id", pa.string()),
            pa.field("t", pa.int32(), nullable=False),
            pa.field("n", pa.int32(), nullable=False),
            pa.field("n_correct", pa.int32(), nullable=False),
            pa.field("lambda", pa.float64()),
            pa.field("alpha", pa.float64()),
            pa.field("eta", pa.float64()),
            pa.field("beta", pa.float64()),
            pa.field("pi_1", pa.float64()),
            pa.field("pi_2", pa.float64()),
            pa.field("pi_3", pa.float64()),
            pa.field("S_t", pa.float64(), nullable=False),
            pa.field("ES_t", pa.float64(), nullable=False),
            # GraphNet's aggregate score of this row's ES_t curve over t = -10..4 (same on every t row)
            pa.field("aggregate_score", pa.float64()),
            pa.field("valid", pa.bool_(), nullable=False),
            pa.field("violations", pa.int32(), nullable=False),
        ]
    ),
    # --- curation tables (curate/: decompose, profile, curate) ---
    # One row per distinct subgraph (canonical hash of an anchor-bounded range; curate.decompose.ranges).
    "subgraphs": pa.schema(
        [
            pa.field("subgraph_hash", pa.string(), nullable=False),  # graph_hash of the range's canonical form
            pa.field("structure_hash", pa.string(), nullable=False),
            pa.field("canonical_version", pa.int32(), nullable=False),
            pa.field("decompose_version", pa.int32(), nullable=False),
            pa.field("num_nodes", pa.int32(), nullable=False),
            pa.field("num_ops", pa.int32(), nullable=False),
            pa.field("num_inputs", pa.int32(), nullable=False),  # placeholders (inputs + parameters + buffers)
            pa.field("num_outputs", pa.int32(), nullable=False),
            pa.field("num_params", pa.int32(), nullable=False),  # parameter/buffer placeholders
            pa.field("param_bytes", pa.int64(), nullable=False),
            pa.field("anchor", pa.string(), nullable=False),  # first anchor op ("" for a prologue)
            pa.field("pattern", pa.string(), nullable=False),  # structure family, e.g. conv2d>batch_norm>relu
            pa.field("status", pa.string(), nullable=False),  # ok | skipped
            pa.field("skip_reason", pa.string()),  # param_bytes_cap | ...
            pa.field("num_instances", pa.int32(), nullable=False),  # ranges over all graph instances
            pa.field("num_parent_graphs", pa.int32(), nullable=False),
            pa.field("num_models", pa.int32(), nullable=False),
            pa.field("model_ids", pa.list_(pa.string()), nullable=False),
            pa.field(
                "members",  # subgraph_members: every (parent unique graph, range) it came from
                pa.list_(pa.struct([pa.field("graph_hash", pa.string()), pa.field("segment_index", pa.int32()),
                                    pa.field("node_start", pa.int32()), pa.field("node_end", pa.int32())])),
                nullable=False,
            ),
            pa.field("store_path", pa.string(), nullable=False),
        ]
    ),
    # One row per (subgraph, size, device, dtype, run): eager, Dynamo-only and Inductor interleaved
    # (curate.profile.variant; times in ms per call; ratios are medians of per-trial ratios).
    "profiles": pa.schema(
        [
            pa.field("subgraph_hash", pa.string(), nullable=False),
            pa.field("size", pa.string(), nullable=False),  # catalog | mid | workload (curate.profile.sizes)
            pa.field("size_kind", pa.string()),  # seq | batch (how the workload size was derived)
            pa.field("size_scale", pa.float64()),  # workload / catalog size of the scaled dim
            pa.field("run", pa.int32(), nullable=False),
            pa.field("stress", pa.bool_(), nullable=False),  # timed while curate.profile.variant.STRESS_CMD ran
            pa.field("attempt_key", pa.string()),
            pa.field("device", pa.string(), nullable=False),
            pa.field("dtype", pa.string(), nullable=False),
            # ok | unstable | accuracy_error | compile_failure | runtime_crash | eager_failed | skipped | isolation_failed
            pa.field("status", pa.string(), nullable=False),
            pa.field("error_code", pa.int32()),  # 1 accuracy (fails every t) | 2 runtime crash | 3 compile failure
            pa.field("error_class", pa.string()),
            pa.field("error_message", pa.string()),
            pa.field("skip_reason", pa.string()),  # no_cpu_kernel | size_inconsistent | no_size_dim
            pa.field("deterministic", pa.bool_()),  # eager twice with one seed gives equal outputs
            pa.field("min_pass_t", pa.int32()),  # smallest t in -10..5 at which every output passes (null: none)
            pa.field("output_min_pass_t", pa.list_(pa.int32())),
            pa.field("output_dtypes", pa.list_(pa.string())),
            pa.field("output_max_abs_diff", pa.list_(pa.float64())),
            pa.field("output_trivial", pa.list_(pa.string())),  # null | constant | near_zero | empty
            *[pa.field(f"{r}{suffix}", pa.float64()) for r in ("speedup_e2e", "speedup_compiler", "speedup_dynamo")
              for suffix in ("", "_ci_low", "_ci_high")],
            pa.field("overhead_bound", pa.bool_()),  # speedup_dynamo interval below 1 - min_effect
            # run-0 protocol rows: timing children pooled into the ratios above (curate.profile.replicates)
            pa.field("replicates", pa.int32()),  # stable children pooled (null: one child, its own interval)
            pa.field("replicates_timed", pa.int32()),
            pa.field("replicates_extended", pa.bool_()),  # more children after the first round left the edge inside the interval
            *[pa.field(f"{r}_replicates", pa.list_(pa.float64())) for r in ("speedup_e2e", "speedup_compiler", "speedup_dynamo")],
            pa.field("speedup_compiler_tau", pa.float64()),  # between-child sd of ln speedup_compiler
            pa.field("min_effect", pa.float64()),
            *[pa.field(f"{s}{suffix}", t) for s in ("eager", "dynamo", "inductor")
              for suffix, t in (("_median_ms", pa.float64()), ("_trials_ms", pa.list_(pa.float64())),
                                ("_wall_median_ms", pa.float64()))],
            pa.field("clock", pa.string()),  # what the trials were measured with (curate.timing.TimingConfig.clock)
            pa.field("clock_gap", pa.float64()),  # median wall / clock ratio of the kept trials
            pa.field("clock_flag", pa.bool_()),  # clock_gap above 1 + max_clock_gap (recorded, not a label)
            pa.field("timing_wall_s", pa.float64()),
            pa.field("phase", pa.string()),  # screen | protocol (curate.profile.run: the timing that labels the row)
            pa.field("screen_candidate", pa.bool_()),  # run 0 with a screen: went on to the full protocol
            pa.field("audit", pa.bool_()),  # run 0 with a screen: a non-candidate in the seeded audit sample
            *[pa.field(f"screen_speedup_compiler{suffix}", pa.float64()) for suffix in ("", "_ci_low", "_ci_high")],
            *[pa.field(f"inner_{s}", pa.int32()) for s in ("eager", "dynamo", "inductor")],
            *[pa.field(f"iqr_ratio_{s}", pa.float64()) for s in ("eager", "dynamo", "inductor")],
            pa.field("stable", pa.bool_()),  # the gate passed within the retries (curate.timing)
            pa.field("timing_attempts", pa.int32()),
            pa.field("trials", pa.int32()),  # kept trials per side (adaptive)
            pa.field("capped", pa.bool_()),  # timing stopped by curate.profile.timing.max_variant_s
            pa.field("remeasure_pass", pa.int32()),  # 0: the run's first timing; k: its k-th re-measurement
            pa.field("min_trial_ms_kept", pa.float64()),  # shortest kept trial
            pa.field("trial_history", pa.string()),  # JSON: every trial of every attempt (curate.timing.SidesTiming)
            pa.field("compile_s", pa.float64()),  # Inductor compile + first call, compile phase, wall seconds
            pa.field("compile_s_dynamo", pa.float64()),
            pa.field("compile_s_warm", pa.float64()),  # Inductor compile in the timing phase (warm cache)
            pa.field("check_seconds", pa.float64()),
            pa.field("eager_check_ms", pa.float64()),  # one eager call in the compile phase (ms): curate.profile.variant.over_time_cap
            pa.field("time_seconds", pa.float64()),
            pa.field("time_cpu_seconds", pa.float64()),  # CPU seconds of the timing child (its cost on a core)
            pa.field("peak_rss_bytes", pa.int64()),
            pa.field("load_avg_start", pa.float64()),  # 1-minute load average when timing began / ended
            pa.field("load_avg_end", pa.float64()),
            pa.field("allocator", pa.string()),  # malloc thresholds the timing ran under (curate.timing.pin_allocator)
            pa.field("threads", pa.int32(), nullable=False),
            pa.field("torch_threads", pa.int32()),
            pa.field("cpu_logical_cores", pa.int32()),
            pa.field("cpu_usable_cores", pa.int32()),  # cores the timing process may run on
            pa.field("device_name", pa.string(), nullable=False),  # CPU model or GPU name
            pa.field("cpu_model", pa.string(), nullable=False),
            pa.field("torch_version", pa.string(), nullable=False),
            pa.field("python_version", pa.string(), nullable=False),
            pa.field("platform", pa.string(), nullable=False),
            pa.field("profile_version", pa.int32(), nullable=False),
            pa.field("code_version", pa.string(), nullable=False),
        ]
    ),
    # One row per profiles row (cpu): labels at tolerance_t (curate.select.longtail); long_tail null = unstable.
    "long_tail": pa.schema(
        [
            pa.field("subgraph_hash", pa.string(), nullable=False),
            pa.field("size", pa.string(), nullable=False),
            pa.field("dtype", pa.string()),
            pa.field("run", pa.int32(), nullable=False),
            pa.field("status", pa.string(), nullable=False),
            pa.field("skip_reason", pa.string()),
            pa.field("pattern", pa.string()),
            pa.field("phase", pa.string()),
            pa.field("screen_candidate", pa.bool_()),
            pa.field("audit", pa.bool_()),
            pa.field("clock_flag", pa.bool_()),
            pa.field("speedup_e2e", pa.float64()),
            pa.field("speedup_compiler", pa.float64()),
            pa.field("speedup_dynamo", pa.float64()),
            pa.field("eager_median_ms", pa.float64()),
            pa.field("overhead_bound", pa.bool_()),
            pa.field("slower_e2e", pa.bool_()),
            pa.field("slower_compiler", pa.bool_()),
            pa.field("overhead_explains", pa.bool_()),  # e2e slower, compiler interval not: the harness explains it
            pa.field("speedup_compiler_ci_high", pa.float64()),
            pa.field("speedup_e2e_ci_high", pa.float64()),
            pa.field("replicates", pa.int32()),  # timing children pooled into the row's ratios (null: one)
            pa.field("speedup_compiler_tau", pa.float64()),  # their between-child sd of ln speedup_compiler
            pa.field("min_pass_t", pa.int32()),
            pa.field("tolerance_t", pa.int32(), nullable=False),
            pa.field("rule", pa.string(), nullable=False),
            pa.field("correct_at_t", pa.bool_(), nullable=False),
            pa.field("long_tail", pa.bool_()),
        ]
    ),
    # One row per task: one long-tail subgraph with its shape x dtype variants (curate.select.tasks).
    "tasks": pa.schema(
        [
            pa.field("task_id", pa.string(), nullable=False),
            pa.field("pattern", pa.string(), nullable=False),
            pa.field("anchor", pa.string(), nullable=False),
            pa.field("num_variants", pa.int32(), nullable=False),
            pa.field("num_subgraphs", pa.int32(), nullable=False),
            pa.field("variant_ids", pa.list_(pa.string()), nullable=False),
            pa.field("subgraph_hashes", pa.list_(pa.string()), nullable=False),
            pa.field("dtypes", pa.list_(pa.string())),
            pa.field("sizes", pa.list_(pa.string())),
            pa.field("model_ids", pa.list_(pa.string()), nullable=False),
            pa.field("min_speedup", pa.float64(), nullable=False),
            pa.field("max_speedup", pa.float64(), nullable=False),
            pa.field("geomean_speedup", pa.float64(), nullable=False),
            pa.field("tolerance_t", pa.int32(), nullable=False),
            pa.field("folder", pa.string(), nullable=False),
        ]
    ),

    # One row per repo listed by the Hub crawl (extract/sources/hub_crawl.py), in listing order.
    "hub_repos": pa.schema(
        [
            pa.field("position", pa.int64(), nullable=False),  # 0 = first listed (sort order of the crawl)
            pa.field("repo_id", pa.string(), nullable=False),
            pa.field("sha", pa.string()),  # commit the row is pinned to
            pa.field("model_id", pa.string(), nullable=False),  # hf:org/name@sha
            pa.field("status", pa.string(), nullable=False),  # ok | skipped | error
            pa.field("reason", pa.string()),  # skip reason or error class (extract/sources/hub_crawl.py)
            pa.field("message", pa.string()),
            pa.field("graph_config_hash", pa.string()),  # dedupe key before capture (extract/sources/hub_configs.py)
            pa.field("captured_as", pa.string()),  # model_id of the catalog row capturing this config
            pa.field("model_type", pa.string()),
            pa.field("architecture", pa.string()),
            pa.field("pipeline_tag", pa.string()),
            pa.field("library", pa.string()),
            pa.field("downloads", pa.int64()),
            pa.field("likes", pa.int64()),
            pa.field("tags_json", pa.string()),
            pa.field("gated", pa.string()),  # False | auto | manual (as the Hub lists it)
            pa.field("private", pa.bool_()),
            pa.field("param_count", pa.int64()),  # safetensors total where the Hub gives it
        ]
    ),
}


def schema_of(name: str) -> pa.Schema:
    """The declared schema of table ``name``, with version metadata attached.

    Raises:
        KeyError: ``name`` is not a declared table.
    """
    if name not in SCHEMAS:
        raise KeyError(f"unknown table {name!r}; declared: {sorted(SCHEMAS)}")
    return SCHEMAS[name].with_metadata(
        {"passnet.table": name, "passnet.schema_version": str(SCHEMA_VERSION)}
    )


def to_table(name: str, rows: Iterable[Mapping], metadata: Mapping[str, str] | None = None) -> pa.Table:
    """Build a typed table ``name`` from dict rows (missing keys become null).

    ``metadata`` adds key-value pairs to the schema metadata (e.g. the library version a
    hash column depends on).

    Raises:
        KeyError: unknown table.
        pyarrow.ArrowInvalid / ArrowTypeError: a value does not fit its column type, or a
            non-nullable column got null; the message names the column.
    """
    schema = schema_of(name)
    rows = list(rows)
    columns = {}
    for field in schema:
        values = [r.get(field.name) for r in rows]
        if not field.nullable and any(v is None for v in values):
            bad = next(i for i, v in enumerate(values) if v is None)
            raise ValueError(f"table {name}: column {field.name!r} is null in row {bad}: {dict(rows[bad])}")
        try:
            columns[field.name] = pa.array(values, type=field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise type(exc)(f"table {name}: column {field.name!r}: {exc}") from exc
    if metadata:
        schema = schema.with_metadata({**schema.metadata, **{k.encode(): str(v).encode() for k, v in metadata.items()}})
    return pa.Table.from_pydict(columns, schema=schema)
