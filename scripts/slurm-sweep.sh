#!/bin/bash
# Run a gradwire sweep as a Slurm job array: task i of N runs the points with
# index % N == i into its own results file; a final step merges them.
#
#   sbatch --array=0-15 scripts/slurm-sweep.sh scenarios/study-compression.yaml
#   # after the array: gradwire merge study.results.jsonl study.shard-*.jsonl
#
# A task that is preempted or times out keeps its finished points: resubmit
# the same array index and it resumes where it stopped.
#SBATCH --job-name=gradwire-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=02:00:00
#SBATCH --output=gradwire-sweep-%A_%a.log
set -euo pipefail
SWEEP=${1:?usage: sbatch --array=0-(N-1) slurm-sweep.sh SWEEP.yaml}
GRADWIRE=${GRADWIRE:-gradwire}
N=${SLURM_ARRAY_TASK_COUNT:?run as a job array (sbatch --array=...)}
I=${SLURM_ARRAY_TASK_ID}
BASE=$(basename "${SWEEP%.yaml}")
exec "$GRADWIRE" sweep "$SWEEP" -j "${SLURM_CPUS_PER_TASK:-1}" --progress lines \
  --shard "$I/$N" --out "$BASE.shard-$I.jsonl"
