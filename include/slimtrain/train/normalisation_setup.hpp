#pragma once
/**
 * @brief Normalisation statistics for a file that has none, computed once and shared: a
 * start-up step of `train` and `eval` (data/normalisation.hpp computes; this sends).
 */
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/data/dataset_info.hpp"

namespace slimtrain::train {

/**
 * @brief Collective. A file with mean/std on /train/x keeps them; one without gets them from
 * data::compute_train_normalisation on rank 0, sent to every rank (the ranks wait under
 * `options`' deadline: one pass over the training split), and rank 0 logs one line saying so.
 */
void share_normalisation(data::DatasetInfo& info, comm::ControlPlane& control,
                         const comm::OpOptions& options = {});

}  // namespace slimtrain::train
