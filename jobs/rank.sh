#!/usr/bin/env bash
# Starts one rank: picks this node's network for NCCL, then runs the command.
#   srun jobs/rank.sh slimtrain train ...      (train.sbatch and local.sh do this)
# Each node looks at its own interfaces and InfiniBand adapters: detecting them once on the batch
# node and exporting the result to every node breaks as soon as nodes differ (eth0 here, ens3 or
# ib0 there). A value the user set (NCCL_SOCKET_IFNAME, NCCL_IB_HCA) is left alone.
if [ -z "${NCCL_IB_HCA:-}" ] && [ -d /sys/class/infiniband ]; then
  hca=$(ls /sys/class/infiniband 2>/dev/null | head -n 1)
  [ -n "$hca" ] && export NCCL_IB_HCA=$hca
fi
if [ -z "${NCCL_SOCKET_IFNAME:-}" ]; then
  # The first interface that is up and not loopback, a container bridge or a veth end.
  for path in /sys/class/net/*; do
    iface=${path##*/}
    case "$iface" in lo | docker* | virbr* | veth* | br-*) continue ;; esac
    [ "$(cat "$path/operstate" 2>/dev/null)" = "down" ] && continue
    export NCCL_SOCKET_IFNAME=$iface
    break
  done
fi
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# One line per node, from its first local rank, so the job's log shows each node's choice.
# mpirun's own variable comes first: under mpirun inside Slurm, every rank inherits the
# SLURM_LOCALID (0) of the Open MPI daemon that srun started on its node.
if [ "${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-0}}" = 0 ]; then
  echo "rank.sh: $(uname -n): NCCL over ${NCCL_SOCKET_IFNAME:-no interface found}," \
    "InfiniBand: ${NCCL_IB_HCA:-none}" >&2
fi
exec "$@"
