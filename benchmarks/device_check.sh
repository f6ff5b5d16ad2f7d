#!/usr/bin/env bash
# Entry of benchmarks/device_check.py on the lent GPU machine (its docstring says what each part measures).
# From the repository root, with .whl/ (trl, datasets, dill, multiprocess wheels) and device_data/ carried:
#   bash benchmarks/device_check.sh [options of `python3 -m benchmarks.device_check run`]
# Installs the wheels into /tmp/site, then runs every part; files under $OUT (device_check.log included).
set -u
OUT=${OUT:-/tmp/device_check_out}
mkdir -p "$OUT"
{
  echo "== device_check.sh: $(nproc) cores; $(python3 --version 2>&1)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi failed"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  pip_rc=$?
  echo "== pip install of" .whl/*.whl "-> rc $pip_rc"
} >> "$OUT/device_check.log" 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
  HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false
python3 -m benchmarks.device_check run --data device_data --out "$OUT" "$@"
rc=$?
tail -n 40 "$OUT/device_check.log"
exit $rc
