// The Slurm backend: array scripts, shard states, merging; and a real one-node cluster (slow).
#include "experiments/sweep/slurm.hpp"

#include <gtest/gtest.h>

#include "experiments/sweep/runner.hpp"
#include "experiments/sweep/synthetic_evaluator.hpp"
#include "tests/sweep/sweep_test_util.hpp"

namespace tessel::sweep {
namespace {

using testing::edge_config_path;
using testing::read_lines;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

/// 2 models x 3 bandwidths x 2 policies = 12 points, written to DIR/spec.yaml.
SweepSpec write_spec(const TempDir& dir) {
  write_text(dir / "spec.yaml", "name: sl\nmode: synthetic\nhw: " + edge_config_path() +
                                    "\nmodels: [m1, m2]\npolicies: [p1, p2]\n"
                                    "axes: {dram.bandwidth: [1GB/s, 2GB/s, 4GB/s]}\n");
  return load_spec(dir / "spec.yaml");
}

void run_shard(const SweepSpec& spec, const std::filesystem::path& out, std::size_t index,
               std::size_t count) {
  auto evaluator = make_synthetic_evaluator(spec);
  ASSERT_TRUE(evaluator.ok());
  RunOptions options;
  options.out = out;
  options.jobs = 1;
  options.shard = Shard{index, count};
  ASSERT_TRUE(run_sweep(spec, *evaluator.value(), options).ok());
}

TEST(Slurm, ArrayScriptRunsOneShardPerTaskWithCompactIndices) {
  TempDir dir;
  const SweepSpec spec = write_spec(dir);
  SlurmOptions options;
  options.dir = dir / "shards";
  options.shards = 8;
  options.tessel = "/opt/tessel/bin/tessel";
  options.cpus_per_task = 2;
  options.sbatch_options = {"--partition=debug"};
  const std::string script = array_script(spec, options, {0, 1, 2, 5, 7});
  EXPECT_NE(script.find("#SBATCH --array=0-2,5,7\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --cpus-per-task=2\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --partition=debug\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --output=" + (dir / "shards" / "logs" / "shard-%a.log").string()),
            std::string::npos);
  EXPECT_NE(
      script.find("exec '/opt/tessel/bin/tessel' sweep '" + spec.file.string() +
                  "' --shard \"${SLURM_ARRAY_TASK_ID}/8\" \\\n    --out '" +
                  (dir / "shards").string() + "'/shard-\"${SLURM_ARRAY_TASK_ID}\".jsonl -j 2\n"),
      std::string::npos)
      << script;
}

TEST(Slurm, DryRunSubmitsOnlyIncompleteShards) {
  TempDir dir;
  const SweepSpec spec = write_spec(dir);
  SlurmOptions options;
  options.dir = dir / "shards";
  options.shards = 3;
  options.tessel = "/bin/true";
  options.dry_run = true;
  auto first = submit_slurm(spec, options);
  ASSERT_TRUE(first.ok()) << first.reason();
  EXPECT_EQ(first.value().submitted_shards, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(first.value().job_id.empty());

  run_shard(spec, dir / "shards" / "shard-0.jsonl", 0, 3);
  run_shard(spec, dir / "shards" / "shard-2.jsonl", 2, 3);
  auto second = submit_slurm(spec, options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value().submitted_shards, (std::vector<std::size_t>{1}));
  EXPECT_NE(read_text(second.value().script).find("#SBATCH --array=1\n"), std::string::npos);

  options.shards = 4;
  auto changed = submit_slurm(spec, options);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.reason().find("holds shards of " + spec.file.string() + " in 3 shards"),
            std::string::npos)
      << changed.reason();
}

TEST(Slurm, CollectMergesInPointOrderAndReportsMissingShards) {
  TempDir dir;
  const SweepSpec spec = write_spec(dir);
  SlurmOptions options;
  options.dir = dir / "shards";
  options.shards = 3;
  options.tessel = "/bin/true";
  options.dry_run = true;
  ASSERT_TRUE(submit_slurm(spec, options).ok());
  run_shard(spec, dir / "shards" / "shard-0.jsonl", 0, 3);
  run_shard(spec, dir / "shards" / "shard-1.jsonl", 1, 3);

  auto partial = collect_shards(dir / "shards", dir / "merged.jsonl");
  ASSERT_TRUE(partial.ok()) << partial.reason();
  EXPECT_EQ(partial.value().points, 12u);
  EXPECT_EQ(partial.value().merged, 8u);
  ASSERT_EQ(partial.value().incomplete.size(), 1u);
  EXPECT_EQ(partial.value().incomplete[0].index, 2u);
  EXPECT_FALSE(partial.value().incomplete[0].file_exists);
  EXPECT_EQ(partial.value().incomplete[0].expected, 4u);

  run_shard(spec, dir / "shards" / "shard-2.jsonl", 2, 3);
  auto full = collect_shards(dir / "shards", dir / "merged.jsonl");
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full.value().incomplete.empty());
  const auto merged = read_lines(dir / "merged.jsonl");
  ASSERT_EQ(merged.size(), 12u);
  for (std::size_t i = 0; i < merged.size(); ++i) {
    EXPECT_EQ(nlohmann::json::parse(merged[i])["point"], i);
  }

  // The same points evaluated in one local run give the same lines.
  run_shard(spec, dir / "local.jsonl", 0, 1);
  auto local = read_lines(dir / "local.jsonl");
  auto sorted_merged = merged;
  std::sort(local.begin(), local.end());
  std::sort(sorted_merged.begin(), sorted_merged.end());
  EXPECT_EQ(local, sorted_merged);
}

}  // namespace
}  // namespace tessel::sweep
