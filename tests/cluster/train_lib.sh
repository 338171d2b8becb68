# Helpers for the cluster tier's training scripts (train_nodes.sh, link_faults.sh): sourced, not
# run. Brings in e2e's lib.sh and train_lib.sh and cluster.sh.
_cluster_tests=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$_cluster_tests/../e2e/lib.sh"
source "$_cluster_tests/../e2e/train_lib.sh"
source "$_cluster_tests/cluster.sh"

# cluster_train_work: exits 77 saying why where no cluster can be built here; else the shell in
# $work (removed at exit), which holds train_data's data set, $D.
cluster_train_work() {
  local why
  why=$(cluster_can_run) || { echo "skipped: $why"; exit 77; }
  new_work
  cd "$work" || exit 1
  train_data "$work" || { echo "FAIL test data"; exit 1; }
  D=$work/data.h5
}
