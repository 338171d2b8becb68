#include "slimtrain/train/placement.hpp"

#include <utility>

namespace slimtrain::train {
namespace {
// "0-1", "0, 2", "3": consecutive ranks as ranges.
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}
}  // namespace

std::vector<RankPlace> gather_placement(const runtime::Runtime& runtime,
                                        comm::ControlPlane& control, int threads) {
  const std::vector<std::int64_t> all = control.all_gather(
      {runtime.local_rank(), runtime.local_size(), static_cast<std::int64_t>(threads)});
  std::vector<RankPlace> places(static_cast<std::size_t>(runtime.size()));
  for (std::size_t r = 0; r < places.size(); ++r) {
    places[r].rank = static_cast<int>(r);
    places[r].host = runtime.hostnames().at(r);
    places[r].local_rank = static_cast<int>(all.at(3 * r));
    places[r].local_size = static_cast<int>(all.at(3 * r + 1));
    places[r].threads = static_cast<int>(all.at(3 * r + 2));
  }
  return places;
}

std::string describe_placement(const std::vector<RankPlace>& places) {
  std::vector<std::pair<std::string, std::vector<int>>> hosts;
  for (const RankPlace& p : places) {
    auto it = hosts.begin();
    while (it != hosts.end() && it->first != p.host) ++it;
    if (it == hosts.end()) it = hosts.insert(hosts.end(), {p.host, {}});
    it->second.push_back(p.rank);
  }
  std::string out;
  for (const auto& [host, ranks] : hosts)
    out += (out.empty() ? "" : ", ") + host + ": rank" + (ranks.size() > 1 ? "s " : " ") +
           rank_ranges(ranks);
  return out;
}

nlohmann::json placement_json(const std::vector<RankPlace>& places) {
  nlohmann::json out = nlohmann::json::array();
  for (const RankPlace& p : places)
    out.push_back({{"rank", p.rank},
                   {"host", p.host},
                   {"local_rank", p.local_rank},
                   {"local_size", p.local_size},
                   {"threads", p.threads}});
  return out;
}

}  // namespace slimtrain::train
