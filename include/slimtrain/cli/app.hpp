#pragma once
/** @brief The `slimtrain` entry point: subcommand dispatch and the error-to-exit-code policy. */
#include <string>
#include <vector>

namespace slimtrain::cli {

/** @brief A subcommand's body: receives the arguments after its name, returns the exit code. */
using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

/** @brief The subcommands, in the order --help lists them. */
const std::vector<Command>& commands();

/**
 * @brief Runs `slimtrain <argv...>`. Any exception becomes one line on stderr and an exit code:
 * 2 for ConfigError/DataError (bad usage or input), 1 for everything else.
 */
int run_main(int argc, char** argv);

/**
 * @brief How a person runs this binary again: "slimtrain" when it was found on PATH, else its
 * absolute path (build/apps/slimtrain run by path, a copy anywhere), so the commands it prints
 * work as printed.
 */
const std::string& program_command();

int run_prep(const std::vector<std::string>& args);
int run_train(const std::vector<std::string>& args);
int run_eval(const std::vector<std::string>& args);
int run_inspect(const std::vector<std::string>& args);
int run_export(const std::vector<std::string>& args);
int run_report(const std::vector<std::string>& args);

}  // namespace slimtrain::cli
