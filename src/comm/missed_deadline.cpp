#include "slimtrain/comm/missed_deadline.hpp"

#include "slimtrain/core/log.hpp"

namespace slimtrain::comm {

TimeoutError missed_deadline(const MissedOperation& missed, StallInspector& inspector,
                             double grace_s, FlightRecorder& recorder) {
  const OpSummary& op = missed.op;
  recorder.caller_timed_out(op.seq);
  const StallReport report = analyse_stall(op, inspector.inquire(missed.id, grace_s));
  const std::string message =
      detail::concat(missed.communicator, " ", to_string(op.kind), " seq ", op.seq, " of ",
                     op.bytes, " bytes missed its deadline of ", missed.timeout_s,
                     " s; missing ranks: ", report.description, inspector.inquiry_scope());
  log::error(message);
  report_flight_recorder(recorder, missed.communicator);
  return TimeoutError(message, report.missing, __FILE__, __LINE__);
}

}  // namespace slimtrain::comm
