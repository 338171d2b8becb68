#include "slimtrain/cli/command_line.hpp"

#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>

#include "slimtrain/core/log.hpp"

namespace slimtrain::cli {

CommandLine::CommandLine(std::string command, std::string synopsis, std::string about)
    : command_(std::move(command)),
      synopsis_(std::move(synopsis)),
      about_(std::move(about)),
      own_(command_ + " options", 100, 50),
      common_("common options", 100, 50) {
  common_.add_options()("help,h", "print this help and exit")(
      "log-level", po::value<std::string>()->default_value("info"),
      "debug, info, warn, error or off");
}

po::options_description_easy_init CommandLine::add() {
  return own_.add_options();
}

void CommandLine::enable_config_file() {
  config_file_ = true;
  common_.add_options()(
      "config", po::value<std::string>(),
      "INI file of options (key = value, names without dashes); the command line wins");
}

std::string CommandLine::help_text() const {
  std::ostringstream out;
  out << "usage: " << synopsis_ << "\n\n" << about_ << "\n\n" << own_ << "\n" << common_;
  if (!epilog_.empty()) out << "\n" << epilog_ << "\n";
  return out.str();
}

namespace {

// The types options are bound to; anything else is named by its type rather than guessed at.
std::string value_text(const boost::any& v) {
  std::ostringstream out;
  out << std::boolalpha;
  if (const auto* s = boost::any_cast<std::string>(&v)) return *s;
  if (const auto* b = boost::any_cast<bool>(&v))
    out << *b;
  else if (const auto* i = boost::any_cast<int>(&v))
    out << *i;
  else if (const auto* l = boost::any_cast<long>(&v))
    out << *l;
  else if (const auto* ll = boost::any_cast<long long>(&v))
    out << *ll;
  else if (const auto* u = boost::any_cast<unsigned long>(&v))
    out << *u;
  else if (const auto* d = boost::any_cast<double>(&v))
    out << *d;
  else
    out << "(" << v.type().name() << ")";
  return out.str();
}

// Boost.ProgramOptions fills its error messages by replacing %option%, %value%, %invalid_line%,
// ... until none is left: an option or value holding such a name (found by fuzz_ini) made what()
// loop forever. Any %word% of letters and underscores is refused before Boost sees it.
void refuse_placeholders(const std::string& text, const std::string& where) {
  for (std::size_t open = text.find('%'); open != std::string::npos;
       open = text.find('%', open + 1)) {
    std::size_t end = open + 1;
    while (end < text.size() &&
           (std::isalpha(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    if (end > open + 1 && end < text.size() && text[end] == '%')
      SLIMTRAIN_THROW(ConfigError, where, ": '", text.substr(open, end + 1 - open),
                      "' cannot appear in an option or a value (Boost.ProgramOptions, which "
                      "reads them, takes %name% for a placeholder of its messages)");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CommandLine::settings() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : values_) {
    if (name == "help" || value.empty()) continue;
    out.emplace_back(name, value_text(value.value()));
  }
  return out;
}

bool CommandLine::parse(const std::vector<std::string>& args) {
  po::options_description all;
  all.add(own_).add(common_);
  for (const std::string& arg : args) refuse_placeholders(arg, "slimtrain " + command_);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional_).run(), values_);
    if (values_.count("help")) {
      std::cout << help_text();
      return false;
    }
    if (config_file_ && values_.count("config")) {
      const std::string path = values_["config"].as<std::string>();
      std::ifstream file(path);
      if (!file) SLIMTRAIN_THROW(ConfigError, "--config: cannot open '", path, "'");
      std::stringstream text;
      text << file.rdbuf();
      refuse_placeholders(text.str(), "--config " + path);
      try {
        // Stored after the command line, so values given there take precedence.
        po::store(po::parse_config_file(text, all, /*allow_unregistered=*/false), values_);
      } catch (const po::error& e) {
        SLIMTRAIN_THROW(ConfigError, "--config ", path, ": ", e.what());
      }
    }
    po::notify(values_);
  } catch (const po::error& e) {
    SLIMTRAIN_THROW(ConfigError, "slimtrain ", command_, ": ", e.what(), " (see 'slimtrain ",
                    command_, " --help')");
  }
  log::set_level(log::parse_level(values_["log-level"].as<std::string>()));
  return true;
}

}  // namespace slimtrain::cli
