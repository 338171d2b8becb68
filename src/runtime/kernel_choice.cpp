#include "slimtrain/runtime/kernel_choice.hpp"

#include <cstdio>
#include <sstream>

namespace slimtrain::runtime {
namespace {

std::string figure(double gflops) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", gflops);
  return text;
}

std::string name_of(const KernelRate& rate) {
  return rate.kernels.empty() ? "?" : rate.kernels;
}

}  // namespace

const KernelRate* KernelChoice::own() const {
  return rates.empty() ? nullptr : &rates.front();
}

const KernelRate* KernelChoice::chosen() const {
  if (rates.empty()) return nullptr;
  for (const KernelRate& r : rates)
    if (!kernels.empty() && r.requested == kernels) return &r;
  return own();
}

const KernelRate* KernelChoice::fastest() const {
  const KernelRate* best = nullptr;
  for (const KernelRate& r : rates)
    if (best == nullptr || r.gflops > best->gflops) best = &r;
  return best;
}

const KernelRate* KernelChoice::rate_of(const std::string& name) const {
  for (const KernelRate& r : rates)
    if (r.kernels == name) return &r;
  return nullptr;
}

std::string KernelChoice::slower_than_best_warning() const {
  const KernelRate* mine = rate_of(yours);
  const KernelRate* best = fastest();
  if (yours.empty() || mine == nullptr || best == nullptr ||
      best->gflops < mine->gflops * kKernelMargin)
    return "";
  char times[16];
  std::snprintf(times, sizeof times, "%.2f", best->gflops / mine->gflops);
  return "OPENBLAS_CORETYPE in the environment loads OpenBLAS's " + name_of(*mine) + " kernels, " +
         figure(mine->gflops) + " GFLOP/s where " + name_of(*best) + "'s run " +
         figure(best->gflops) + " on this CPU (" + times +
         "x; 1024-cubed sgemm on one core): matrix products run that much slower. Kept, as you "
         "set it; unset OPENBLAS_CORETYPE (or set it to " +
         name_of(*best) + ") to run the fastest";
}

std::string KernelChoice::describe() const {
  if (!yours.empty()) {
    const KernelRate* mine = rate_of(yours);
    if (mine == nullptr)
      return "; OPENBLAS_CORETYPE set by you (" + yours + "): kernels not compared (" +
             (rates.empty() ? how : "no figure for " + yours) + ")";
    std::string out =
        "; OPENBLAS_CORETYPE set by you, kept: " + yours + " " + figure(mine->gflops) + " GFLOP/s";
    const KernelRate* best = fastest();
    if (best != mine && best->gflops >= mine->gflops * kKernelMargin)
      out += ", " + name_of(*best) + " " + figure(best->gflops) + " on this CPU";
    else
      out += ", no other set " + std::to_string(static_cast<int>((kKernelMargin - 1) * 100 + 0.5)) +
             "% faster";
    return out + "; 1024-cubed sgemm on one core, " + how;
  }
  if (rates.empty()) return "; kernels not measured (" + how + "): OpenBLAS's own choice kept";
  std::string others;
  for (const KernelRate& r : rates) {
    if (&r == chosen() || &r == own()) continue;
    others += (others.empty() ? "" : ", ") + name_of(r) + " " + figure(r.gflops);
  }
  std::string out;
  if (chosen() != own()) {
    out = "; kernels chosen by measurement: " + name_of(*chosen()) + " " +
          figure(chosen()->gflops) + " GFLOP/s against OpenBLAS's own " + name_of(*own()) + " " +
          figure(own()->gflops);
  } else {
    out = "; OpenBLAS's own kernels kept by measurement: " + name_of(*own()) + " " +
          figure(own()->gflops) + " GFLOP/s, no other " +
          std::to_string(static_cast<int>((kKernelMargin - 1) * 100 + 0.5)) + "% faster";
  }
  if (!others.empty()) out += " (also measured: " + others + ")";
  return out + "; 1024-cubed sgemm on one core, " + how;
}

std::string KernelChoice::serialise() const {
  std::ostringstream out;
  out << "kernels " << (kernels.empty() ? "-" : kernels) << "\n";
  for (const KernelRate& r : rates)
    out << "rate " << (r.requested.empty() ? "-" : r.requested) << " "
        << (r.kernels.empty() ? "?" : r.kernels) << " " << figure(r.gflops) << "\n";
  if (!yours.empty()) out << "yours " << yours << "\n";
  if (!how.empty()) out << "how " << how << "\n";
  return out.str();
}

KernelChoice KernelChoice::parse(const std::string& text) {
  KernelChoice choice;
  std::istringstream lines(text);
  std::string line;
  bool ok = true;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "kernels") {
      words >> choice.kernels;
      if (choice.kernels == "-") choice.kernels.clear();
    } else if (tag == "rate") {
      KernelRate r;
      ok = ok && static_cast<bool>(words >> r.requested >> r.kernels >> r.gflops);
      if (r.requested == "-") r.requested.clear();
      choice.rates.push_back(r);
    } else if (tag == "yours") {
      words >> choice.yours;
    } else if (tag == "how") {
      std::getline(words >> std::ws, choice.how);
    }
  }
  // The own choice comes first and the chosen set is one of the rates: else no figure is trusted.
  if (!choice.rates.empty()) ok = ok && choice.rates.front().requested.empty();
  if (!choice.kernels.empty()) ok = ok && choice.chosen() != choice.own();
  if (!ok) {
    choice.rates.clear();
    choice.kernels.clear();
  }
  return choice;
}

std::string fastest_kernels(const std::vector<KernelRate>& rates) {
  if (rates.empty()) return "";
  const KernelRate* best = &rates.front();
  for (const KernelRate& r : rates)
    if (r.gflops > best->gflops) best = &r;
  if (best == &rates.front() || best->kernels == rates.front().kernels) return "";
  return best->gflops >= rates.front().gflops * kKernelMargin ? best->requested : "";
}

}  // namespace slimtrain::runtime
