#!/usr/bin/env bash
# Runs slimtrain under mpirun on a workstation: jobs/local.sh [-n RANKS] <subcommand> [options]
#   jobs/local.sh -n 2 train --config jobs/fashion_demo.ini --data data/fashion-mnist.h5 --out runs/demo
set -euo pipefail
ranks=2
if [ "${1:-}" = "-n" ]; then ranks=$2; shift 2; fi
. "$(dirname "$0")/env.sh"
[ -x "${SLIMTRAIN_BIN:-}" ] || { echo "local.sh: build slimtrain first (./scripts/build.sh)" >&2; exit 2; }
exec mpirun -np "$ranks" --oversubscribe -x OMP_NUM_THREADS "$SLIMTRAIN_BIN" "$@"
