#pragma once
/**
 * @brief Where every rank runs: its host, local rank and threads, gathered once at start-up and
 * shown in the start line ("node1: ranks 0-1, node2: ranks 2-3") and the "start" record, so that
 * a multi-node job says how it was laid out before anything else can go wrong.
 */
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "slimtrain/comm/control_plane.hpp"
#include "slimtrain/runtime/runtime.hpp"

namespace slimtrain::train {

struct RankPlace {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  int local_size = 1;
  int threads = 1;
};

/** @brief Every rank's place, in rank order (collective over the control plane). */
std::vector<RankPlace> gather_placement(const runtime::Runtime& runtime,
                                        comm::ControlPlane& control, int threads);

/** @brief "node1: ranks 0-1, node2: ranks 2-3": hosts in order of their first rank. */
std::string describe_placement(const std::vector<RankPlace>& places);

nlohmann::json placement_json(const std::vector<RankPlace>& places);

}  // namespace slimtrain::train
