// TraceWriter: streams Chrome trace-event JSON with a size cap.
#include "sim/core/trace_writer.hpp"
#include "support/json_text.hpp"

#include <nlohmann/json.hpp>

namespace tessel::sim {

Result<TraceWriter> TraceWriter::open(const std::string& path, std::uint64_t max_events) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot open trace file '" + path + "' for writing");
  return TraceWriter(std::move(out), max_events);
}

TraceWriter::TraceWriter(std::ofstream out, std::uint64_t max_events)
    : out_(std::move(out)), max_events_(max_events) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

TraceWriter::~TraceWriter() {
  if (out_.is_open()) close();
}

void TraceWriter::begin_event() {
  if (!first_) out_ << ",\n";
  first_ = false;
}

void TraceWriter::name_track(int track_id, const std::string& name) {
  if (closed_) return;
  begin_event();
  out_ << R"({"ph":"M","pid":0,"tid":)" << track_id << R"(,"name":"thread_name","args":{"name":)"
       << tessel::json_text(nlohmann::json(name), -1) << "}}";
}

void TraceWriter::slice(int track_id, const std::string& name, std::uint64_t start_cycle,
                        std::uint64_t end_cycle, const std::string& args_json) {
  if (closed_) return;
  if (recorded_ >= max_events_) {
    ++dropped_;
    return;
  }
  ++recorded_;
  begin_event();
  out_ << R"({"ph":"X","pid":0,"tid":)" << track_id << R"(,"ts":)" << start_cycle << R"(,"dur":)"
       << (end_cycle - start_cycle) << R"(,"name":)" << tessel::json_text(nlohmann::json(name), -1);
  if (!args_json.empty()) out_ << R"(,"args":)" << args_json;
  out_ << "}";
}

void TraceWriter::close() {
  if (closed_) return;
  closed_ = true;
  nlohmann::json meta = {{"time_unit", "1 trace microsecond = 1 simulated cycle"},
                         {"max_events", max_events_},
                         {"recorded_events", recorded_},
                         {"dropped_events", dropped_},
                         {"truncated", dropped_ > 0}};
  out_ << "\n],\"otherData\":" << tessel::json_text(meta, -1) << "}\n";
  out_.close();
}

}  // namespace tessel::sim
