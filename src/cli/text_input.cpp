#include "slimtrain/cli/text_input.hpp"

#include "slimtrain/cli/shared_input.hpp"
#include "slimtrain/comm/agreement.hpp"
#include "slimtrain/core/detail/joined.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/data/text_check.hpp"
#include "slimtrain/data/text_encoding.hpp"

namespace slimtrain::cli {
namespace {

// Every column given by index (or as last/first): the header may be a record in disguise.
bool columns_by_index(const data::TextColumns& columns) {
  auto index = [](const std::string& c) {
    return c == "last" || c == "first" ||
           (!c.empty() && c.find_first_not_of("0123456789") == std::string::npos);
  };
  bool all = index(columns.label);
  for (const std::string& c : columns.text) all = all && index(c);
  return all;
}

std::string describe_flaws(const data::TextFlaws& flaws) {
  return flaws.invalid_utf8 > 0
             ? detail::concat(flaws.invalid_utf8,
                              flaws.invalid_utf8 == 1 ? " byte that is" : " bytes that are",
                              " not UTF-8")
             : detail::concat(flaws.nul, flaws.nul == 1 ? " NUL byte" : " NUL bytes");
}

}  // namespace

// A label keeps its class apart with U+FFFD in place of its flaws: a NUL would end its name in
// the file, and bytes that are not UTF-8 cannot be in its UTF-8 class names.
void check_record(data::TextRecord& record, bool strict, TextNotes& notes,
                  const std::string& where) {
  data::TextFlaws flaws;
  for (const std::string& text : record.texts) {
    const data::TextFlaws f = data::text_flaws(text);
    flaws.invalid_utf8 += f.invalid_utf8;
    flaws.nul += f.nul;
  }
  const data::TextFlaws label = data::text_flaws(record.label);
  if (strict && flaws.any())
    SLIMTRAIN_THROW(DataError, where, ": ", describe_flaws(flaws),
                    " (--strict; without it they become <unk> and are counted; --encoding names "
                    "the file's encoding)");
  if (strict && label.any())
    SLIMTRAIN_THROW(DataError, where, ": the label '", data::printable(record.label), "' holds ",
                    describe_flaws(label), " (--strict; --encoding names the file's encoding)");
  if (flaws.invalid_utf8 > 0 && notes.invalid_utf8++ == 0) notes.first_invalid = where;
  if (flaws.nul > 0 && notes.nul++ == 0) notes.first_nul = where;
  if (label.any()) {
    if (notes.flawed_labels++ == 0)
      notes.first_flawed_label = where + " ('" + data::printable(record.label) + "')";
    record.label = data::without_flaws(record.label);
  }
}

std::unique_ptr<data::TextTable> open_text_table(comm::ControlPlane& control, MPI_Comm io_comm,
                                                 const std::string& path, const std::string& option,
                                                 const data::TextColumns& columns,
                                                 const std::string& encoding, double io_timeout_s) {
  const data::TextFormat format = data::text_format_of(path, option, columns);
  data::InputBytes bytes = open_input_shared(path, control, io_comm, io_timeout_s);
  std::unique_ptr<data::TextTable> t;
  data::TextDecoding decoding;
  comm::on_all_ranks(control, [&] {
    // Re-encoded to UTF-8 before anything reads a record.
    bytes = data::decode_text(std::move(bytes), path, encoding, &decoding);
    t = std::make_unique<data::TextTable>(std::move(bytes), path, format, columns);
  });
  if (decoding.converted)
    log::info_rank0("prep text: ", path, " read as ", decoding.from,
                    decoding.by_mark ? " (its byte order mark says so)" : " (--encoding)",
                    " and re-encoded to UTF-8");
  if (t->had_byte_order_mark())
    log::info_rank0("prep text: ", path, " begins with a UTF-8 byte order mark: skipped");
  if (!t->header().empty() && columns_by_index(columns))
    log::info_rank0("prep text: the first row of ", path, " is its header (",
                    data::printable(detail::joined(t->header())),
                    "), not a record, as pandas reads it (--no-header reads it as a record)");
  return t;
}

}  // namespace slimtrain::cli
