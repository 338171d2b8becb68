# Sourced (by build-and-check.sh and bench/gpu/run.sh) once the Debian packages are unpacked into
# the private prefix $P: the paths and Open MPI settings that run slimtrain from there.
OMPI_INC=$P/usr/lib/x86_64-linux-gnu/openmpi/include
OMPI_LIB=$P/usr/lib/x86_64-linux-gnu/openmpi/lib
H5_DIR=$P/usr/lib/x86_64-linux-gnu/hdf5/openmpi
export PATH=$P/usr/bin:$PATH
export LD_LIBRARY_PATH=$P/runlib:$OMPI_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$P/usr OPAL_SYSCONFDIR=$P/etc/openmpi
export PMIX_PREFIX=$P/usr/lib/x86_64-linux-gnu/pmix2
export HWLOC_PLUGINS_PATH=$P/usr/lib/x86_64-linux-gnu/hwloc
[ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null && export PATH=$PATH:/usr/local/cuda/bin
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_base_warn_component_unused=0
# Debian's /etc/openmpi defaults, plus what containers need (no ptrace for CMA, maybe no ssh).
export OMPI_MCA_btl='^uct,openib,ofi' OMPI_MCA_pml='^ucx' OMPI_MCA_osc='^ucx,pt2pt' OMPI_MCA_mtl='^ofi'
export OMPI_MCA_btl_vader_single_copy_mechanism=none
command -v ssh >/dev/null || command -v rsh >/dev/null || export OMPI_MCA_plm_rsh_agent=false
