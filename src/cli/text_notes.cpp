#include "slimtrain/cli/text_notes.hpp"

#include "slimtrain/cli/prep_output.hpp"
#include "slimtrain/core/log.hpp"

namespace slimtrain::cli {

// Rank 0 says, once for the job, what the records held that the tokenizer reads as <unk> or that
// was cut; every rank's counts and first records gathered.
void report_text_notes(comm::ControlPlane& control, const std::vector<TextNotes>& notes,
                       std::int64_t max_length) {
  TextNotes mine;
  for (const TextNotes& n : notes) {
    if (mine.first_invalid.empty()) mine.first_invalid = n.first_invalid;
    if (mine.first_nul.empty()) mine.first_nul = n.first_nul;
    if (mine.first_flawed_label.empty()) mine.first_flawed_label = n.first_flawed_label;
    mine.flawed_labels += n.flawed_labels;
    mine.invalid_utf8 += n.invalid_utf8;
    mine.nul += n.nul;
    mine.cut += n.cut;
    if (n.longest > mine.longest) {
      mine.longest = n.longest;
      mine.longest_at = n.longest_at;
    }
  }
  const std::vector<std::int64_t> totals = control.all_reduce(
      std::vector<std::int64_t>{mine.invalid_utf8, mine.nul, mine.cut, mine.flawed_labels},
      comm::ReduceOp::sum);
  const std::int64_t longest =
      control.all_reduce(std::vector<std::int64_t>{mine.longest}, comm::ReduceOp::max).front();
  auto first = [&](const std::string& local) {
    for (const std::string& s : gather_lines(control, local + "\n"))
      if (!s.empty()) return s;
    return std::string();
  };
  const std::string invalid_at = first(mine.first_invalid), nul_at = first(mine.first_nul);
  const std::string label_at = first(mine.first_flawed_label);
  const std::string longest_at = first(mine.longest == longest ? mine.longest_at : "");
  if (control.rank() != 0) return;
  // "N records hold <what> (the first: <where>); <what becomes of them>", where N > 0.
  auto warn_flawed = [](std::int64_t n, const char* noun, const char* what,
                        const std::string& first_at, const char* outcome) {
    if (n > 0)
      log::warn("prep text: ", n, " ", noun, n == 1 ? " holds " : "s hold ", what,
                " (the first: ", first_at, "); ", outcome);
  };
  warn_flawed(totals[0], "record", "bytes that are not UTF-8", invalid_at,
              "the tokenizer reads them as <unk> (--encoding names the file's encoding, cp1252 or "
              "latin1 say; --strict refuses them)");
  warn_flawed(totals[1], "record", "NUL bytes", nul_at,
              "the tokenizer reads them as <unk> (--strict refuses them)");
  warn_flawed(totals[3], "label", "bytes that are not UTF-8 or NUL bytes", label_at,
              "each is U+FFFD in the class names (--strict refuses them; --encoding names the "
              "file's encoding)");
  if (totals[2] > 0)
    log::warn("prep text: ", totals[2], " sample", totals[2] == 1 ? " was" : "s were", " cut to ",
              max_length, " tokens (--max-length; the longest had ", longest, ": ", longest_at,
              ")");
}

}  // namespace slimtrain::cli
