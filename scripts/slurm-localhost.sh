#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (Debian's slurm-wlm and munge), for the
# test of `composim sweep --slurm`. Needs root. Idempotent: does nothing if sinfo already
# answers. Usage: scripts/slurm-localhost.sh start|stop
set -euo pipefail
cmd=${1:-start}
state=/tmp/composim-slurm
if [ "$cmd" = stop ]; then
  pkill -x slurmctld 2>/dev/null || true
  pkill -x slurmd 2>/dev/null || true
  exit 0
fi
command -v slurmctld >/dev/null && command -v munged >/dev/null || { echo "slurm-localhost: slurm-wlm and munge are not installed"; exit 3; }
[ "$(id -u)" -eq 0 ] || { echo "slurm-localhost: needs root"; exit 3; }
if timeout 5 sinfo -h >/dev/null 2>&1; then echo "slurm-localhost: already running"; exit 0; fi
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$state"/{ctld,d} /etc/slurm /run/munge /var/log/munge /var/lib/munge /etc/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged --force
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=composim
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 30); do
  if sinfo -h -o %T 2>/dev/null | grep -qE "idle|mix|alloc"; then echo "slurm-localhost: running on $host ($cpus CPUs)"; exit 0; fi
  sleep 1
done
echo "slurm-localhost: slurm did not come up; see $state/*.log"
exit 1
