// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): one track per engine, one
// complete ("X") slice per instruction, with a cap on the number of recorded events.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support/result.hpp"

namespace tessel::sim {

/// Streams trace events to a file. Timestamps are simulated cycles written as microseconds
/// (1 cycle shows as 1 us), which the file's metadata states. Past `max_events` slices, events
/// are counted but not written, and the file says how many were dropped.
class TraceWriter {
 public:
  /// Opens `path` for writing; fails with a message naming the path.
  static Result<TraceWriter> open(const std::string& path, std::uint64_t max_events);

  TraceWriter(TraceWriter&&) = default;
  TraceWriter& operator=(TraceWriter&&) = default;
  ~TraceWriter();

  /// Names track `track_id` (e.g. "LOAD"); call once per track before or after its slices.
  void name_track(int track_id, const std::string& name);

  /// One slice [start_cycle, end_cycle) on `track_id`; `args_json` is a JSON object text or "".
  void slice(int track_id, const std::string& name, std::uint64_t start_cycle,
             std::uint64_t end_cycle, const std::string& args_json = "");

  /// Writes the metadata (cap, dropped count) and closes the file; idempotent.
  void close();

  std::uint64_t recorded_events() const { return recorded_; }
  std::uint64_t dropped_events() const { return dropped_; }

 private:
  TraceWriter(std::ofstream out, std::uint64_t max_events);
  void begin_event();

  std::ofstream out_;
  std::uint64_t max_events_ = 0;
  std::uint64_t recorded_ = 0;
  std::uint64_t dropped_ = 0;
  bool first_ = true;
  bool closed_ = false;
};

}  // namespace tessel::sim
