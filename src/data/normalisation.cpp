#include "slimtrain/data/normalisation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/split_reader.hpp"

namespace slimtrain::data {

ChannelMoments::ChannelMoments(std::int64_t channels, std::int64_t inner)
    : channels_(channels), inner_(inner), sums_(static_cast<std::size_t>(2 * channels), 0.0) {}

void ChannelMoments::add(const void* samples, std::int64_t count, ElementType type) {
  const std::int64_t elements = channels_ * inner_;
  for (std::int64_t c = 0; c < channels_; ++c) {
    double s = 0, q = 0;
    if (type == ElementType::kUint8) {
      std::uint64_t si = 0, qi = 0;  // exact; doubles hold these sums exactly below 2^53
      const auto* base = static_cast<const std::uint8_t*>(samples);
      for (std::int64_t i = 0; i < count; ++i) {
        const std::uint8_t* p = base + i * elements + c * inner_;
        for (std::int64_t k = 0; k < inner_; ++k) {
          si += p[k];
          qi += std::uint32_t(p[k]) * p[k];
        }
      }
      s = static_cast<double>(si);
      q = static_cast<double>(qi);
    } else {
      const auto* base = static_cast<const float*>(samples);
      for (std::int64_t i = 0; i < count; ++i) {
        const float* p = base + i * elements + c * inner_;
        for (std::int64_t k = 0; k < inner_; ++k) {
          s += p[k];
          q += double(p[k]) * p[k];
        }
      }
    }
    sums_[static_cast<std::size_t>(c)] += s;
    sums_[static_cast<std::size_t>(channels_ + c)] += q;
  }
}

void ChannelMoments::finish(std::int64_t samples, std::vector<float>& mean,
                            std::vector<float>& std) const {
  mean.clear();
  std.clear();
  const double per_channel = double(samples) * double(inner_);
  for (std::int64_t c = 0; c < channels_; ++c) {
    const double m = per_channel > 0 ? sums_[static_cast<std::size_t>(c)] / per_channel : 0.0;
    const double sq =
        per_channel > 0 ? sums_[static_cast<std::size_t>(channels_ + c)] / per_channel : 0.0;
    mean.push_back(static_cast<float>(m));
    std.push_back(static_cast<float>(std::sqrt(std::max(0.0, sq - m * m))));
  }
}

void compute_train_normalisation(DatasetInfo& info) {
  const std::int64_t channels = info.channels();
  ChannelMoments moments(channels, info.sample_elements() / channels);
  // A reader needs mean/std to exist; raw reads do not use them.
  info.mean.assign(static_cast<std::size_t>(channels), 0.0f);
  info.std.assign(static_cast<std::size_t>(channels), 1.0f);
  const SplitReader reader(info, "train");
  const std::int64_t block = std::max<std::int64_t>(reader.block_rows(), 1);
  std::vector<std::uint8_t> raw;
  for (std::int64_t begin = 0; begin < reader.size(); begin += block) {
    const std::int64_t count = std::min(block, reader.size() - begin);
    raw.resize(static_cast<std::size_t>(count) * reader.sample_bytes());
    reader.read_x(begin, count, raw.data());
    moments.add(raw.data(), count, reader.x_type());
  }
  moments.finish(reader.size(), info.mean, info.std);
}

std::string normalisation_bytes(const DatasetInfo& info) {
  std::string out(2 * info.mean.size() * sizeof(float), '\0');
  std::memcpy(out.data(), info.mean.data(), info.mean.size() * sizeof(float));
  std::memcpy(out.data() + info.mean.size() * sizeof(float), info.std.data(),
              info.std.size() * sizeof(float));
  return out;
}

bool set_normalisation_bytes(DatasetInfo& info, const std::string& bytes) {
  const std::size_t channels = static_cast<std::size_t>(info.channels());
  if (bytes.size() != 2 * channels * sizeof(float)) return false;
  info.mean.resize(channels);
  info.std.resize(channels);
  std::memcpy(info.mean.data(), bytes.data(), channels * sizeof(float));
  std::memcpy(info.std.data(), bytes.data() + channels * sizeof(float), channels * sizeof(float));
  return true;
}

void log_computed_normalisation(const DatasetInfo& info) {
  std::string values;
  for (std::size_t c = 0; c < std::min<std::size_t>(info.mean.size(), 4); ++c)
    values += slimtrain::detail::concat(c ? ", " : "", info.mean[c], "/", info.std[c]);
  if (info.mean.size() > 4)
    values += slimtrain::detail::concat(", ... (", info.mean.size(), " in all)");
  log::info(info.path, ": /train/x has no mean/std attributes: computed them from its ",
            info.split_size("train"), " samples (mean/std ", values,
            "); `slimtrain prep` writes them into the file");
}

void ensure_normalisation(DatasetInfo& info) {
  if (!info.mean.empty() || info.named()) return;  // named inputs: their own attributes
  compute_train_normalisation(info);
  log_computed_normalisation(info);
}

}  // namespace slimtrain::data

namespace slimtrain::data {

DatasetInfo read_normalised_info(const std::string& path) {
  DatasetInfo info = read_dataset_info(path);
  ensure_normalisation(info);
  return info;
}

}  // namespace slimtrain::data
