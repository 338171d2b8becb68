# Environment for slimtrain jobs; sourced by train.sbatch, prep.sbatch and local.sh.
# Every variable can be set before sourcing to override the choice made here.

# One LibTorch/OpenMP thread pool per rank, sized to the cores Slurm gave the task.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
export SLIMTRAIN_THREADS=${SLIMTRAIN_THREADS:-$OMP_NUM_THREADS}

# Open MPI: allow oversubscription on small allocations, keep ranks from binding to one core
# when Slurm already placed them, and accept running as root inside containers.
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
# When a rank dies, mpirun ends the others: by default SIGTERM, then SIGKILL a second later, in
# rounds (4 s on two simulated nodes), and slimtrain's ranks take SIGTERM as "checkpoint and
# stop", which a job missing a rank cannot do. At once: a relaunch starts 4 s sooner.
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-0}
# An Open MPI daemon on a node whose link was cut never hears that mpirun is gone: its TCP
# connection sees no reset, only silence, and it waited forever (left behind on the node, even
# once the link was back). TCP keepalive on that connection: probes after 30 s idle, every 5 s,
# lost after 3: the daemon ends about 45 s after it lost mpirun. mpirun also ends a job whose
# node stopped answering that soon, naming it, where slimtrain's own default deadline is 120 s
# (a shorter --collective-timeout reports first, naming the ranks).
export OMPI_MCA_oob_tcp_keepalive_time=${OMPI_MCA_oob_tcp_keepalive_time:-30}
export OMPI_MCA_oob_tcp_keepalive_intvl=${OMPI_MCA_oob_tcp_keepalive_intvl:-5}
export OMPI_MCA_oob_tcp_keepalive_probes=${OMPI_MCA_oob_tcp_keepalive_probes:-3}
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# NCCL's interface and InfiniBand adapter are chosen on each node by jobs/rank.sh, which the
# launchers start every rank through (set NCCL_SOCKET_IFNAME / NCCL_IB_HCA here to force them).

# The slimtrain binary: $SLIMTRAIN_BIN, else the build tree next to these scripts, else PATH.
jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${SLIMTRAIN_BIN:-}" ]; then
  if [ -x "$jobs_dir/../build/apps/slimtrain" ]; then
    SLIMTRAIN_BIN=$jobs_dir/../build/apps/slimtrain
  else
    SLIMTRAIN_BIN=$(command -v slimtrain || true)
  fi
fi
export SLIMTRAIN_BIN
