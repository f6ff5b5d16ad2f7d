#!/bin/bash
# Default-pipeline budget. MODE=single (default): one `dvc repro`, each stage's wall and CPU seconds read from
# DVC's output (benchmarks/repro_budget_run.py; peak RSS for the whole run only). MODE=stages: `dvc repro <stage>`
# for every stage in dvc.yaml order (topological) in the current checkout, recording per stage wall seconds, CPU seconds (user + sys of the stage's process tree,
# GNU time), peak RSS and the 1-minute load average before/after. Writes metrics/bench/repro_budget.tsv and
# metrics/bench/repro_budget.json (and prints the table). A stage DVC skips costs ~2 s (DVC's own start).
# Run from a clean clone to measure a full rebuild:  bash benchmarks/repro_budget.sh
# Needs GNU time (/usr/bin/time) and the venv of `make setup`.
set -u
cd "$(dirname "$0")/.." || exit 1
make setup >/dev/null || { echo "make setup failed" >&2; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"
TSV=${TSV:-metrics/bench/repro_budget.tsv}  # another TSV (and JSON beside it) for a partial measurement
mkdir -p metrics/bench
if [ "${MODE:-single}" = single ]; then
  # what the README promises: one `dvc repro`, per-stage times read from its output (benchmarks/repro_budget_run.py)
  python -m benchmarks.repro_budget_run --tsv "$TSV.part"
  rc=$?
  mv "$TSV.part" "$TSV"; mv "$TSV.part.total.json" "$TSV.total.json" 2>/dev/null
  REPRO_BUDGET_COMMAND="bash benchmarks/repro_budget.sh (clean clone, one dvc repro)" python -m benchmarks.repro_budget_summary "$TSV"
  exit $rc
fi
STAGES=${STAGES:-$(dvc stage list --name-only | sed 's/@.*//' | awk '!seen[$0]++')}
printf "stage\twall_s\tuser_s\tsys_s\tmaxrss_kb\tload1_before\tload1_after\trc\n" > "$TSV.part"
t=$(mktemp)
for s in $STAGES; do
  lb=$(cut -d' ' -f1 /proc/loadavg)
  echo "=== $(date +%T) stage $s (load $lb)"
  /usr/bin/time -o "$t" -f "%e\t%U\t%S\t%M" dvc repro "$s"
  rc=$?
  printf "%s\t%s\t%s\t%s\t%s\n" "$s" "$(tail -1 "$t")" "$lb" "$(cut -d' ' -f1 /proc/loadavg)" "$rc" >> "$TSV.part"
  [ "$rc" = 0 ] || { echo "stage $s failed (rc $rc)" >&2; break; }
done
rm -f "$t"
mv "$TSV.part" "$TSV"
python -m benchmarks.repro_budget_summary "$TSV"
