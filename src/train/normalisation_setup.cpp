#include "slimtrain/train/normalisation_setup.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/normalisation.hpp"

namespace slimtrain::train {

void share_normalisation(data::DatasetInfo& info, comm::ControlPlane& control,
                         const comm::OpOptions& options) {
  if (!info.mean.empty() || info.named()) return;  // named inputs: their own attributes
  const std::string bytes = comm::decide_on_root(
      control, 0,
      [&] {
        data::compute_train_normalisation(info);
        return data::normalisation_bytes(info);
      },
      options);
  if (!data::set_normalisation_bytes(info, bytes))
    SLIMTRAIN_THROW(CommError, "normalisation from rank 0: ", bytes.size(), " bytes for ",
                    info.channels(), " channels");
  if (control.rank() == 0) data::log_computed_normalisation(info);
}

}  // namespace slimtrain::train
