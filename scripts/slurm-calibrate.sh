#!/bin/bash
# Multi-node calibration under Slurm: one task per GPU on every node, all
# ranks of one gradwire-calibrate --mpi job; rank 0 writes the profile
# (docs/calibrate.md, "Across nodes").
#
#   sbatch -N 2 scripts/slurm-calibrate.sh h200-2x8.yaml
#   sbatch -N 2 --export=ALL,GPUS_PER_NODE=4,NCCL_IB_HCA=mlx5 scripts/slurm-calibrate.sh a100-2x4.yaml
#
# Environment: GPUS_PER_NODE (default 8), GRADWIRE_CALIBRATE (default
# gradwire-calibrate, at the same path on every node), SRUN_MPI (srun's --mpi
# plugin, default pmix; `srun --mpi=list` shows the cluster's), CALIBRATE_ARGS
# (extra options, e.g. "--quick" or "--device cpu"). NCCL_* variables of the
# job's environment reach every rank.
#SBATCH --job-name=gradwire-calibrate
#SBATCH --exclusive
#SBATCH --time=00:15:00
#SBATCH --output=gradwire-calibrate-%j.log
set -euo pipefail
OUT=${1:?usage: sbatch -N NODES slurm-calibrate.sh PROFILE.yaml}
GPUS=${GPUS_PER_NODE:-8}
# shellcheck disable=SC2086  # CALIBRATE_ARGS is a list of options
exec srun --ntasks-per-node "$GPUS" --gpus-per-node "$GPUS" --mpi="${SRUN_MPI:-pmix}" \
  "${GRADWIRE_CALIBRATE:-gradwire-calibrate}" --mpi --out "$OUT" ${CALIBRATE_ARGS:-}
