// The local runner with a fake evaluator: every point once, resume, stop, invalid vs error.
#include "experiments/sweep/runner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "experiments/sweep/progress.hpp"
#include "tests/sweep/sweep_test_util.hpp"

namespace tessel::sweep {
namespace {

using testing::edge_config_path;
using testing::read_lines;
using testing::TempDir;

SweepSpec small_spec() {
  // 2 models x 3 bandwidths x 2 policies = 12 points.
  return parse_spec("name: small\nmode: synthetic\nhw: " + edge_config_path() +
                        "\nmodels: [m1, m2]\npolicies: [p1, p2]\n"
                        "axes: {dram.bandwidth: [1GB/s, 2GB/s, 4GB/s]}\n",
                    "small.yaml");
}

/// Figures = {"index": i}; points whose index is in `invalid` are invalid, in `failing` errors.
class FakeEvaluator final : public PointEvaluator {
 public:
  std::set<std::size_t> invalid, failing;
  std::multiset<std::size_t> calls;
  std::atomic<bool>* stop_after_first = nullptr;

  Evaluation evaluate(const SweepPoint& point) override {
    {
      std::lock_guard lock(mutex_);
      calls.insert(point.index);
    }
    if (stop_after_first) stop_after_first->store(true);
    if (invalid.count(point.index))
      return Evaluation::invalid("too small: " + std::to_string(point.index));
    if (failing.count(point.index)) return Evaluation::error("crashed");
    nlohmann::ordered_json figures;
    figures["index"] = point.index;
    return Evaluation::ok(figures);
  }

 private:
  std::mutex mutex_;
};

std::set<std::string> ids_in(const std::filesystem::path& file) {
  std::set<std::string> ids;
  for (const std::string& line : read_lines(file)) ids.insert(nlohmann::json::parse(line)["id"]);
  return ids;
}

TEST(Runner, EvaluatesEveryPointOnceAcrossThreads) {
  TempDir dir;
  const SweepSpec spec = small_spec();
  FakeEvaluator evaluator;
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 4;
  auto summary = run_sweep(spec, evaluator, options);
  ASSERT_TRUE(summary.ok()) << summary.reason();
  EXPECT_EQ(summary.value().selected, 12u);
  EXPECT_EQ(summary.value().ok, 12u);
  EXPECT_FALSE(summary.value().interrupted);
  EXPECT_EQ(evaluator.calls.size(), 12u);
  EXPECT_EQ(std::set<std::size_t>(evaluator.calls.begin(), evaluator.calls.end()).size(), 12u);
  EXPECT_EQ(read_lines(options.out).size(), 12u);
  EXPECT_EQ(ids_in(options.out).size(), 12u);
}

TEST(Runner, RerunSkipsCompletedPointsAndEvaluatesNothingTwice) {
  TempDir dir;
  const SweepSpec spec = small_spec();
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 1;
  options.shard = Shard{0, 2};  // first the even points
  FakeEvaluator first;
  ASSERT_TRUE(run_sweep(spec, first, options).ok());
  EXPECT_EQ(first.calls, (std::multiset<std::size_t>{0, 2, 4, 6, 8, 10}));

  options.shard.reset();
  FakeEvaluator second;
  auto summary = run_sweep(spec, second, options);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary.value().already_done, 6u);
  EXPECT_EQ(second.calls, (std::multiset<std::size_t>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(read_lines(options.out).size(), 12u);
  EXPECT_EQ(ids_in(options.out).size(), 12u);

  FakeEvaluator third;
  ASSERT_TRUE(run_sweep(spec, third, options).ok());
  EXPECT_TRUE(third.calls.empty());
}

TEST(Runner, InvalidPointsAreRecordedErrorsAreRetried) {
  TempDir dir;
  const SweepSpec spec = small_spec();
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 2;
  FakeEvaluator evaluator;
  evaluator.invalid = {3};
  evaluator.failing = {5};
  auto summary = run_sweep(spec, evaluator, options);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary.value().ok, 10u);
  EXPECT_EQ(summary.value().invalid, 1u);
  EXPECT_EQ(summary.value().errors, 1u);
  EXPECT_EQ(summary.value().error_reasons, (std::vector<std::string>{"point 5: crashed"}));
  EXPECT_EQ(read_lines(options.out).size(), 11u);
  bool found_invalid = false;
  for (const std::string& line : read_lines(options.out)) {
    const auto object = nlohmann::json::parse(line);
    if (object["point"] == 3) {
      found_invalid = true;
      EXPECT_EQ(object["status"], "invalid");
      EXPECT_EQ(object["reason"], "too small: 3");
      EXPECT_FALSE(object.contains("figures"));
    }
  }
  EXPECT_TRUE(found_invalid);

  FakeEvaluator retry;
  ASSERT_TRUE(run_sweep(spec, retry, options).ok());
  EXPECT_EQ(retry.calls, (std::multiset<std::size_t>{5}));
  EXPECT_EQ(read_lines(options.out).size(), 12u);
}

TEST(Runner, StopRequestFinishesTheInFlightPointAndStartsNoOther) {
  TempDir dir;
  const SweepSpec spec = small_spec();
  std::atomic<bool> stop{false};
  FakeEvaluator evaluator;
  evaluator.stop_after_first = &stop;
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 1;
  options.stop = &stop;
  auto summary = run_sweep(spec, evaluator, options);
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary.value().interrupted);
  EXPECT_EQ(evaluator.calls.size(), 1u);
  EXPECT_EQ(read_lines(options.out).size(), 1u);
  EXPECT_EQ(summary.value().remaining(), 11u);
}

/// Two points in flight on two threads; once both are inside evaluate(), another thread
/// requests the token; each call then waits (bounded) until its own thread sees the request
/// through cancel_requested() and returns ok figures, which the runner must drop as partial.
class CancelledInFlight final : public PointEvaluator {
 public:
  CancelToken token;
  std::atomic<int> entered{0}, saw_request{0};
  std::multiset<std::size_t> calls;

  Evaluation evaluate(const SweepPoint& point) override {
    {
      std::lock_guard lock(mutex_);
      calls.insert(point.index);
    }
    const auto until = [](auto ready) {  // bounded: a missing scope fails, never hangs
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!ready() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return ready();
    };
    if (++entered == 2) std::thread([this] { token.request(); }).join();
    until([this] { return entered.load() >= 2; });
    if (until([] { return cancel_requested(); })) ++saw_request;
    nlohmann::ordered_json figures;
    figures["index"] = point.index;
    return Evaluation::ok(figures);
  }

 private:
  std::mutex mutex_;
};

TEST(Runner, CancelStopsThePointsInFlightOnEveryThreadAndRecordsNoneOfThem) {
  TempDir dir;
  const SweepSpec spec = small_spec();
  CancelledInFlight evaluator;
  RunOptions options;
  options.out = dir / "r.jsonl";
  options.jobs = 2;
  options.cancel = &evaluator.token;
  auto summary = run_sweep(spec, evaluator, options);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(evaluator.calls.size(), 2u);
  EXPECT_EQ(evaluator.saw_request.load(), 2) << "a worker thread evaluated without the token";
  EXPECT_TRUE(summary.value().interrupted);
  EXPECT_EQ(summary.value().ok, 0u);
  EXPECT_EQ(summary.value().errors, 0u);
  EXPECT_FALSE(std::filesystem::exists(options.out) && !read_lines(options.out).empty());
  EXPECT_FALSE(cancel_requested()) << "the calling thread's scope outlived the sweep";

  // A rerun without the token evaluates every point, the two cancelled ones included.
  FakeEvaluator rerun;
  options.cancel = nullptr;
  auto again = run_sweep(spec, rerun, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().already_done, 0u);
  EXPECT_EQ(rerun.calls.size(), 12u);
  EXPECT_EQ(ids_in(options.out).size(), 12u);
}

TEST(Runner, ResultsLineCarriesIdentityAxesFiguresAndVersion) {
  const SweepSpec spec = small_spec();
  const SweepPoint& point = spec.points[3];  // m1, bandwidth 2GB/s, p2
  nlohmann::ordered_json figures;
  figures["cycles"] = 42;
  const auto line =
      nlohmann::ordered_json::parse(results_line(spec, point, Evaluation::ok(figures)));
  std::vector<std::string> keys;
  for (const auto& [key, value] : line.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "point", "spec", "model", "policy", "mode",
                                            "objective", "tiles_2d", "axes", "config_hash",
                                            "status", "figures", "tool_version"}));
  EXPECT_EQ(line["tiles_2d"], true);
  EXPECT_EQ(line["id"], point.id);
  EXPECT_EQ(line["point"], 3);
  EXPECT_EQ(line["model"], "m1");
  EXPECT_EQ(line["policy"], "p2");
  EXPECT_EQ(line["axes"].dump(), R"({"dram.bandwidth":"2GB/s"})");
  EXPECT_EQ(line["figures"].dump(), R"({"cycles":42})");
  EXPECT_EQ(line["status"], "ok");
}

TEST(Shard, ParsesIOverNAndRejectsOutOfRange) {
  auto shard = parse_shard("2/5");
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(shard.value().index, 2u);
  EXPECT_EQ(shard.value().count, 5u);
  EXPECT_EQ(parse_shard("5/5").reason(), "bad shard '5/5': expected I/N with 0 <= I < N");
  EXPECT_FALSE(parse_shard("1/0").ok());
  EXPECT_FALSE(parse_shard("x/2").ok());
}

TEST(Progress, StatusTextHasCountRateAndEta) {
  ProgressCounts counts;
  counts.done = 20;
  counts.ok = 18;
  counts.invalid = 2;
  EXPECT_EQ(ProgressReporter::status_text(counts, 80, 10.0),
            "20/80 (25%) 2.0 pt/s ETA 0:30 [ok 18, invalid 2]");
  counts.errors = 1;
  EXPECT_EQ(ProgressReporter::status_text(counts, 80, 4000.0),
            "20/80 (25%) 0.0 pt/s ETA 3:20:00 [ok 18, invalid 2, errors 1]");
}

TEST(Progress, PlainModePrintsPeriodicLinesAndAFinalOne) {
  std::ostringstream out;
  ProgressReporter progress(out, /*terminal=*/false, 4, std::chrono::hours(1));
  ProgressCounts counts;
  counts.done = counts.ok = 1;
  progress.update(counts);  // throttled: the interval has not passed
  EXPECT_EQ(out.str(), "");
  counts.done = counts.ok = 4;
  progress.finish(counts);
  EXPECT_EQ(out.str().rfind("sweep: 4/4 (100%)", 0), 0u) << out.str();
}

}  // namespace
}  // namespace tessel::sweep
