#!/bin/bash
# slurm-local.sh DIR COMMAND [ARGS...]
#
# Starts a one-machine Slurm cluster (munged, slurmctld and slurmd of Debian's
# slurm-wlm packages, all state under DIR, nothing under /etc or /var), runs
# COMMAND with SLURM_CONF pointing at it, then stops the daemons and returns
# COMMAND's exit status. DIR must not exist: the script makes it, and leaves
# it (logs, spool) for a look afterwards.
#
# The cluster: one node (this host, 127.0.0.1) with every CPU of the machine,
# one partition `gw`, free TCP ports picked at start, munge with a fresh key
# and its own socket. Daemons run as the calling user (root in CI).
#
#   scripts/slurm-local.sh /tmp/slurm sbatch --wait --array=0-3 ...
#
# Exit 77 when the Slurm or munge programs are missing (./setup.sh installs
# them); 3 when the cluster does not come up in time (the logs are in DIR).
set -euo pipefail
DIR=${1:?usage: slurm-local.sh DIR COMMAND [ARGS...]}
shift
[[ $# -gt 0 ]] || { echo "slurm-local.sh: no command given" >&2; exit 2; }
for prog in munged slurmctld slurmd sinfo; do
  command -v "$prog" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  command -v "$prog" >/dev/null 2>&1 || { echo "slurm-local.sh: $prog not found (./setup.sh installs Slurm and munge)" >&2; exit 77; }
done
if [[ -e $DIR ]]; then
  echo "slurm-local.sh: $DIR exists; give a new directory" >&2
  exit 2
fi
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
mkdir -m 700 "$DIR/state" "$DIR/spool"
mkdir -m 711 "$DIR/munge"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [[ $SLURMD_PORT == "$CTLD_PORT" ]]; do SLURMD_PORT=$(free_port); done
NODE=$(hostname -s)
CPUS=$(nproc)
USER_NAME=$(id -un)

# munge: a fresh 1 KiB key, readable by the owner alone.
head -c 1024 /dev/urandom > "$DIR/munge/munge.key"
chmod 400 "$DIR/munge/munge.key"
SOCKET="$DIR/munge/munge.socket"

cat > "$DIR/slurm.conf" <<EOF
ClusterName=gradwire-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=$USER_NAME
SlurmdUser=$USER_NAME
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=gw Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$DIR/slurm.conf

PIDS=()
# stop: let finished jobs report their steps' completion (slurmstepd needs
# slurmctld and munged for that), then stop slurmd, slurmctld and munged in
# that order, each given 10 s before SIGKILL.
stop() {
  local pid i
  for _ in $(seq 150); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.2; done
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PIDS[i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap stop EXIT

munged --foreground --force --key-file="$DIR/munge/munge.key" --socket="$SOCKET" \
  --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
  --seed-file="$DIR/munge/munged.seed" &
PIDS+=($!)
for _ in $(seq 50); do [[ -S $SOCKET ]] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" > "$DIR/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" > "$DIR/slurmd.out" 2>&1 &
PIDS+=($!)

# Up when the node is idle (or mixed/allocated, if a job got there first).
up=
for _ in $(seq 150); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
  if [[ $state == idle* || $state == mix* || $state == alloc* ]]; then up=1; break; fi
  sleep 0.2
done
if [[ -z $up ]]; then
  echo "slurm-local.sh: the cluster did not come up in 30 s (logs in $DIR)" >&2
  exit 3
fi

rc=0
"$@" || rc=$?
exit $rc
