#pragma once
/**
 * @brief Option parsing shared by every subcommand: Boost.ProgramOptions, an optional INI config
 * file (--config, the command line wins), --help that lists every option with its default, and
 * bad values turned into ConfigError naming the option (exit 2).
 */
#include <boost/program_options.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "slimtrain/core/error.hpp"

namespace slimtrain::cli {

namespace po = boost::program_options;

/**
 * @brief An option bound to `field` whose default is the field's current value, shown in --help
 * the way a user writes it (0.05 and true, not 0.050000000000000003 and 1).
 */
template <class T>
po::typed_value<T>* bound(T& field) {
  std::ostringstream shown;
  shown << std::boolalpha << field;
  return po::value(&field)->default_value(field, shown.str());
}

/** @brief --threads of the commands that run a model on ranks (train, eval): one text for both. */
inline constexpr const char* kThreadsHelp =
    "LibTorch threads per rank (0: the cores of the rank's affinity mask, shared among the ranks "
    "of its node that overlap it: srun --cpus-per-task, mpirun binding, cgroup cpusets)";

/** @brief --confusion-max-classes of train and eval: one text for both. */
inline constexpr const char* kConfusionMaxClassesHelp =
    "classes up to which an evaluation keeps the whole C x C confusion matrix (at most 4096); "
    "above, the statistics stay linear in the classes (per class its true positives, predictions "
    "and samples) and the most frequent confusions come from a bounded sample, said so";

class CommandLine {
 public:
  /** @param command e.g. "train"; @param synopsis one usage line; @param about a paragraph for
   * --help */
  CommandLine(std::string command, std::string synopsis, std::string about);

  /** @brief Add the subcommand's own options here (a group shown under "<command> options"). */
  po::options_description_easy_init add();
  po::positional_options_description& positional() { return positional_; }
  /** @brief Accept --config FILE.ini; keys in the file are option names without dashes. */
  void enable_config_file();
  /** @brief Text after the option list in --help (examples, exit codes). */
  void set_epilog(std::string text) { epilog_ = std::move(text); }

  /** @brief Parses `args`; returns false after printing --help (the caller exits 0). */
  bool parse(const std::vector<std::string>& args);

  const po::variables_map& values() const { return values_; }
  bool has(const std::string& name) const {
    return values_.count(name) > 0 && !values_[name].defaulted();
  }
  template <typename T>
  T get(const std::string& name) const {
    return values_[name].as<T>();
  }
  std::string help_text() const;
  /**
   * @brief Every option with a value, as the user would write it ("lr" -> "0.05"), from the
   * command line, the INI file or the default: what a run records as its configuration.
   */
  std::vector<std::pair<std::string, std::string>> settings() const;
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  std::string synopsis_;
  std::string about_;
  std::string epilog_;
  po::options_description own_;
  po::options_description common_;
  po::positional_options_description positional_;
  po::variables_map values_;
  bool config_file_ = false;
};

/** @brief Throws ConfigError "<option>: <value> is outside [lo, hi]" when out of range. */
template <typename T>
void require_range(const std::string& option, T value, T lo, T hi) {
  if (value < lo || value > hi)
    SLIMTRAIN_THROW(ConfigError, option, ": ", value, " is outside the allowed range [", lo, ", ",
                    hi, "]");
}

}  // namespace slimtrain::cli
