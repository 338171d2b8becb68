# Environment for slimtrain jobs; sourced by train.sbatch, prep.sbatch and local.sh.
# Every variable can be set before sourcing to override the choice made here.

# One LibTorch/OpenMP thread pool per rank, sized to the cores Slurm gave the task.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
export SLIMTRAIN_THREADS=${SLIMTRAIN_THREADS:-$OMP_NUM_THREADS}

# Open MPI: allow oversubscription on small allocations, keep ranks from binding to one core
# when Slurm already placed them, and accept running as root inside containers.
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
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
